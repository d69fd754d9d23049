// Package anthropic is the engine.Model for Anthropic's messages API,
// streamed, and for gateways that speak it.
package anthropic

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/coda-acp/coda/engine"
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
	model string
	opts  Options
	call  sse.Call
}

// New returns the model named model (e.g. "claude-sonnet-4-5").
func New(model string, opts Options) *Model {
	opts = opts.WithDefaults("anthropic", model, DefaultBaseURL)
	if opts.MaxTokens <= 0 {
		opts.MaxTokens = DefaultMaxTokens
	}
	h := opts.Header("X-Api-Key", "")
	h.Set("Anthropic-Version", Version)
	return &Model{model: model, opts: opts, call: opts.Call("/v1/messages", h)}
}

// Name is the spec the model was chosen by.
func (m *Model) Name() string { return m.opts.Name }

// Stream sends req and streams the reply. A try that fails before anything
// was passed to onDelta is retried as the Retry option allows (429, 5xx and
// 529, overloaded_error events, connection errors, a stream broken early);
// after that a failure ends the call. A 404 wraps engine.ErrModelUnavailable
// (see sse.Call.Do).
func (m *Model) Stream(ctx context.Context, req *engine.Request, onDelta func(engine.Delta) error) (*engine.Response, error) {
	body, err := m.encode(req)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", m.opts.Name, err)
	}
	var s *stream
	err = m.call.Do(ctx, body, func(ctx context.Context, r *sse.Reader, started *bool) error {
		s = &stream{onDelta: onDelta, started: started}
		return s.read(r)
	})
	if err != nil {
		return nil, err
	}
	resp, err := s.response()
	if err != nil {
		return nil, err
	}
	resp.Usage.ContextWindow = m.opts.ContextWindow
	// Thinking sent back must carry the signature it came with: the signed
	// blocks ride along with the reply as its Replay.
	if blocks := s.thinkingBlocks(); len(blocks) > 0 {
		resp.Replay, _ = json.Marshal(blocks)
	}
	return resp, nil
}
