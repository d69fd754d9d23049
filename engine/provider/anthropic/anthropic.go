// Package anthropic is the llm.Model for Anthropic's messages API,
// streamed, and for gateways that speak it.
package anthropic

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/provider"
	"github.com/coda-acp/coda/engine/provider/sse"
)

// DefaultBaseURL is Anthropic's endpoint; "/v1/messages" is appended, as
// Anthropic's SDKs do.
const DefaultBaseURL = "https://api.anthropic.com"

// Version is the anthropic-version header sent.
const Version = "2023-06-01"

// DefaultMaxTokens is the reply cap when none is configured; the API
// requires one.
const DefaultMaxTokens = 16384

// Options configure a Model (engine/provider.Options). BaseURL defaults to
// DefaultBaseURL, MaxTokens to DefaultMaxTokens; ThinkingBudget turns on
// extended thinking with that many tokens (at least 1024, less than
// MaxTokens).
type Options = provider.Options

// A Model is one Claude model. It is safe for concurrent use.
type Model struct {
	model        string
	opts         Options
	maxTokensSet bool // the options set MaxTokens
	call         sse.Call
	once         provider.Once

	// files is the Files API's call (its beta header on); filesCall, the
	// messages call for a request that names an uploaded file; uploads
	// sends a turn's images through it (files.go).
	files, filesCall sse.Call
	uploads          provider.Uploader
}

// New returns the model named model (e.g. "claude-sonnet-4-5").
func New(model string, opts Options) *Model {
	opts = opts.WithDefaults("anthropic", model, DefaultBaseURL)
	set := opts.MaxTokens > 0
	if !set {
		opts.MaxTokens = DefaultMaxTokens
	}
	h := opts.Header("X-Api-Key", "")
	h.Set("Anthropic-Version", Version)
	fh := withBeta(h, filesBeta)
	m := &Model{model: model, opts: opts, maxTokensSet: set, call: opts.Call("/v1/messages", h),
		files: opts.Call("/v1/files", fh), filesCall: opts.Call("/v1/messages", fh)}
	m.uploads = provider.Uploader{Kind: "anthropic", Opts: opts, Upload: m.upload, Delete: m.deleteFile, Sticky: true}
	return m
}

// Name is the spec the model was chosen by.
func (m *Model) Name() string { return m.opts.Name }

// Shapes are what the Messages API takes for req (DESIGN §17): strict
// tools in Anthropic's subset; a named tool_choice, but not with thinking
// on ("Thinking may not be enabled when tool_choice forces tool use") nor
// for the models that refuse one (the catalog's NoForcedTool); JSON
// outputs (output_config.format) with a schema only.
func (m *Model) Shapes(req *llm.Request) llm.Shapes {
	var scratch request
	scratch.MaxTokens = m.opts.MaxTokens
	thinks := m.thinking(&scratch, m.opts.EffortOf(req))
	return llm.Shapes{Strict: llm.StrictAnthropic, ToolChoice: !thinks && !m.opts.NoForcedTool, Reply: true}
}

// Stream sends req and streams the reply. A try that fails before anything
// was passed to onDelta is retried as the Retry option allows (429, 5xx and
// 529, overloaded_error events, connection errors, a stream broken early);
// after that a failure ends the call. A 404 wraps llm.ErrModelUnavailable
// (see sse.Call.Do); a 400 that names a mechanism the request used (a
// strict tool, the forced tool choice, the JSON output format) is an
// *llm.MechanismError.
func (m *Model) Stream(ctx context.Context, req *llm.Request, onDelta func(llm.Delta) error) (*llm.Response, error) {
	var r request
	body, err := m.encodeWith(req, func(im llm.Image) string { return m.uploads.File(ctx, im) }, &r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", m.opts.Name, err)
	}
	shaping := sse.Shaping{
		Strict:     slices.ContainsFunc(r.Tools, func(t tool) bool { return t.Strict }),
		ToolChoice: r.ToolChoice != nil && r.ToolChoice.Type == "tool",
		Reply:      r.OutputConfig != nil && r.OutputConfig.Format != nil,
	}
	if body, err = provider.WithParams(provider.ParamsAnthropic, req, body, &shaping); err != nil {
		return nil, fmt.Errorf("%s: %w", m.opts.Name, err)
	}
	call := m.call.Within(req.Timeout)
	if r.files {
		call = m.filesCall.Within(req.Timeout)
	}
	var s *stream
	err = call.DoShaped(ctx, body, shaping, func(ctx context.Context, rd *sse.Reader, started *bool) error {
		s = &stream{onDelta: onDelta, started: started}
		m.opts.Budget.Start(&s.text, &s.thinking, &s.kept)
		return s.read(rd)
	})
	if err != nil {
		return nil, mechanismError(shaping, err)
	}
	resp, err := s.response()
	if err != nil {
		return nil, err
	}
	resp.Usage.ContextWindow = m.opts.ContextWindow
	// Thinking sent back must carry the signature it came with, in its
	// place: the reply's blocks ride along with it as its Replay.
	resp.Replay = s.replay(m.model)
	return resp, nil
}

// schemaComplexity reports whether a 400's message (lower case) is one of
// the structured-outputs complexity limits.
func schemaComplexity(msg string) bool {
	return strings.Contains(msg, "too many optional parameters") || strings.Contains(msg, "parameters with union types") ||
		strings.Contains(msg, "schema is too complex") || strings.Contains(msg, "too many strict tools") || strings.Contains(msg, "too many recursive definitions")
}

// mechanismError is err as an *llm.MechanismError when it is a 400 that
// names, in Anthropic's words, a mechanism the request used (sse's
// shaping knows the words every API shares); err otherwise.
func mechanismError(used sse.Shaping, err error) error {
	var serr *sse.StatusError
	var merr *llm.MechanismError
	if errors.As(err, &merr) || !errors.As(err, &serr) || serr.Code != http.StatusBadRequest {
		return err
	}
	msg := strings.ToLower(serr.Message)
	switch {
	case used.Reply && (strings.Contains(msg, "output_config.format") || strings.Contains(msg, "output_format") || strings.Contains(msg, "structured output")):
		return &llm.MechanismError{Mechanism: sse.MechanismReply, Err: err}
	case used.Strict && (strings.Contains(msg, "strict") || strings.HasPrefix(msg, "tools.") && strings.Contains(msg, "additionalproperties")):
		return &llm.MechanismError{Mechanism: sse.MechanismStrict, Err: err}
	case used.Strict && schemaComplexity(msg):
		// The limits count a request's strict tools and JSON output
		// together ("Schemas contains too many optional parameters",
		// "... parameters with union types", "Schema is too complex"):
		// without strict tools the rest fits.
		return &llm.MechanismError{Mechanism: sse.MechanismStrict, Err: err}
	case used.Reply && schemaComplexity(msg):
		return &llm.MechanismError{Mechanism: sse.MechanismReply, Err: err}
	}
	return err
}
