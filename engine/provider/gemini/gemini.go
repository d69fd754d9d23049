// Package gemini is the llm.Model for Google's Gemini API
// (generativelanguage.googleapis.com), streamed: models.streamGenerateContent
// with alt=sse.
package gemini

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/provider"
	"github.com/coda-acp/coda/engine/provider/sse"
)

// DefaultBaseURL is the Gemini API's endpoint; "/models/MODEL:..." is
// appended.
const DefaultBaseURL = "https://generativelanguage.googleapis.com/v1beta"

// How a model is told how much to think (a catalog fact: Options.Thinking).
// https://ai.google.dev/gemini-api/docs/thinking
const (
	// ThinkingLevel is generationConfig.thinkingConfig.thinkingLevel
	// ("low", "high", ...): Gemini 3 and later.
	ThinkingLevel = "level"
	// ThinkingBudget is thinkingConfig.thinkingBudget, in tokens (0 is
	// off where the model allows it): Gemini 2.5.
	ThinkingBudget = "budget"
	// ThinkingNone is a model that does not think, or of which nothing is
	// known: no thinkingConfig is sent.
	ThinkingNone = ""
)

// Options configure a Model (engine/provider.Options). BaseURL defaults
// to DefaultBaseURL; MaxTokens is generationConfig.maxOutputTokens (0
// leaves the model's own limit); Thinking is ThinkingLevel,
// ThinkingBudget or ThinkingNone, from the catalog.
type Options = provider.Options

// A Model is one Gemini model. It is safe for concurrent use.
type Model struct {
	model string
	opts  Options
	call  sse.Call
	calls atomic.Int64 // numbers the tool calls Gemini sent without an id
	// uploads sends a turn's images through the Files API (upload.go).
	uploads provider.Uploader
}

// New returns the model named model (e.g. "gemini-2.5-flash"; a leading
// "models/" is dropped).
func New(model string, opts Options) *Model {
	model = strings.TrimPrefix(model, "models/")
	opts = opts.WithDefaults("gemini", model, DefaultBaseURL)
	h := opts.Header("X-Goog-Api-Key", "")
	m := &Model{
		model: model,
		opts:  opts,
		call:  opts.Call("/models/"+url.PathEscape(model)+":streamGenerateContent?alt=sse", h),
	}
	// Google deletes an upload after 48 hours: nothing to delete.
	m.uploads = provider.Uploader{Kind: "gemini", Opts: opts, Upload: m.upload}
	return m
}

// Name is the spec the model was chosen by.
func (m *Model) Name() string { return m.opts.Name }

// Shapes are what generateContent takes (DESIGN §17): no strict flag,
// function_calling_config mode ANY with allowed_function_names, and
// responseMimeType application/json with or without responseJsonSchema;
// but not the JSON reply beside function declarations on a model before
// Gemini 3, which refuses it ("Function calling with a response mime
// type: 'application/json' is unsupported"): structured outputs with
// tools are Gemini 3's
// (https://ai.google.dev/gemini-api/docs/structured-output#structured_outputs_with_tools).
func (m *Model) Shapes(req *llm.Request) llm.Shapes {
	json := len(req.Tools) == 0 || jsonWithTools(m.model)
	return llm.Shapes{ToolChoice: true, Reply: json, ReplyAny: json}
}

// jsonWithTools reports whether model takes a JSON reply together with
// function declarations: Gemini 3 and later, and any model whose name
// does not say it is older (an alias, a tuned model).
func jsonWithTools(model string) bool {
	rest, ok := strings.CutPrefix(strings.ToLower(model), "gemini-")
	if !ok {
		return true
	}
	major, _, _ := strings.Cut(rest, ".")
	major, _, _ = strings.Cut(major, "-")
	n, err := strconv.Atoi(major)
	return err != nil || n >= 3
}

// Stream sends req and streams the reply. A try that fails before anything
// was passed to onDelta is retried as the Retry option allows (429, 5xx,
// errors in the stream that say so, connection errors). A 404 wraps
// llm.ErrModelUnavailable; a 400 that names a mechanism the request
// used (the reply's JSON schema or MIME type, a forced function) is an
// *llm.MechanismError.
func (m *Model) Stream(ctx context.Context, req *llm.Request, onDelta func(llm.Delta) error) (*llm.Response, error) {
	body, err := m.encodeWith(req, func(im llm.Image) string { return m.uploads.File(ctx, im) })
	if err != nil {
		return nil, fmt.Errorf("%s: %w", m.opts.Name, err)
	}
	var s *stream
	shaping := sse.Shaping{ToolChoice: req.ToolChoice != "" && len(req.Tools) > 0, Reply: req.Reply != nil}
	if body, err = provider.WithParams(provider.ParamsGemini, req, body, &shaping); err != nil {
		return nil, fmt.Errorf("%s: %w", m.opts.Name, err)
	}
	err = m.call.Within(req.Timeout).DoShaped(ctx, body, shaping, func(ctx context.Context, r *sse.Reader, started *bool) error {
		s = &stream{onDelta: onDelta, started: started, newID: m.newID}
		m.opts.Budget.Start(&s.text, &s.thinking, &s.kept)
		return s.read(r)
	})
	if err != nil {
		return nil, mechanismError(req, err)
	}
	resp, err := s.response(m.model)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", m.opts.Name, err)
	}
	resp.Usage.ContextWindow = m.opts.ContextWindow
	return resp, nil
}

// localIDPrefix starts the id coda gives a tool call Gemini sent without
// one; such an id is never sent back to Gemini.
const localIDPrefix = "gemini-call-"

func (m *Model) newID() string {
	return fmt.Sprintf("%s%d", localIDPrefix, m.calls.Add(1))
}

// mechanismError is err as an *llm.MechanismError when it is a 400 whose
// message names a mechanism req used, so that the engine can try again
// with a weaker one; err otherwise.
func mechanismError(req *llm.Request, err error) error {
	var serr *sse.StatusError
	var merr *llm.MechanismError
	if errors.As(err, &merr) || !errors.As(err, &serr) || serr.Code != http.StatusBadRequest {
		return err
	}
	msg := strings.ToLower(serr.Message)
	switch {
	case req.Reply != nil && containsAny(msg, "response_mime_type", "responsemimetype", "response_json_schema", "responsejsonschema", "response_schema", "responseschema", "mime type"):
		return &llm.MechanismError{Mechanism: "reply_format", Err: err}
	case req.ToolChoice != "" && containsAny(msg, "function_calling_config", "functioncallingconfig", "allowed_function_names", "allowedfunctionnames", "tool_config", "toolconfig"):
		return &llm.MechanismError{Mechanism: "tool_choice", Err: err}
	}
	return err
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
