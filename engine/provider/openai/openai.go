// Package openai is the engine.Model for OpenAI's chat completions API,
// streamed, and for the servers that speak it: Ollama, vLLM, llama.cpp,
// OpenRouter and other gateways.
//
// It tolerates what those servers do differently: tool calls that arrive
// whole with finish_reason "stop", tool call fragments without an index,
// reasoning under reasoning_content or reasoning, errors inside a 200
// stream, keep-alive comments, usage in a last chunk without choices, and a
// reply sent as one JSON document despite "stream".
package openai

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/provider/sse"
)

// DefaultBaseURL is OpenAI's own endpoint; paths are appended to it as the
// vendors' SDKs do.
const DefaultBaseURL = "https://api.openai.com/v1"

// Options configure a Model. The zero value talks to OpenAI without a key.
type Options struct {
	Name    string            // the spec the model was chosen by; default "openai:"+model
	BaseURL string            // default DefaultBaseURL; "/chat/completions" is appended
	APIKey  string            // sent as a Bearer token; empty sends none (Ollama, llama.cpp)
	Headers map[string]string // extra headers, such as OpenRouter's HTTP-Referer and X-Title

	// MaxTokens caps the reply; 0 leaves it to the server. OpenAI's own API
	// is sent max_completion_tokens (its reasoning models refuse
	// max_tokens), every other server max_tokens.
	MaxTokens int

	// Timeout is how long the server may go without completing a line
	// (before replying and between streamed pieces) before the try is
	// abandoned; 0 means sse.DefaultTimeout (5 minutes).
	Timeout time.Duration
	// MaxCallTime bounds a whole call, every try included, however lively
	// the server; 0 means sse.DefaultMaxCallTime (30 minutes).
	MaxCallTime time.Duration
	Retry       sse.Retry
	Client      *http.Client // nil means http.DefaultClient

	// ContextWindow is reported in each Response's Usage; 0 when unknown.
	ContextWindow int
	// NoVision says the model cannot see images: each is sent as a line of
	// text instead (engine.Image.StandIn).
	NoVision bool
}

// A Model is one model behind a chat completions endpoint. It is safe for
// concurrent use.
type Model struct {
	model string
	opts  Options
	call  sse.Call
}

// New returns the model named model (as the server names it, e.g. "gpt-5.1"
// or "llama3.1:8b").
func New(model string, opts Options) *Model {
	if opts.Name == "" {
		opts.Name = "openai:" + model
	}
	if opts.BaseURL == "" {
		opts.BaseURL = DefaultBaseURL
	}
	if opts.Timeout <= 0 {
		opts.Timeout = sse.DefaultTimeout
	}
	h := http.Header{}
	for k, v := range opts.Headers {
		h.Set(k, v)
	}
	if opts.APIKey != "" {
		h.Set("Authorization", "Bearer "+opts.APIKey)
	}
	return &Model{
		model: model,
		opts:  opts,
		call: sse.Call{
			Name:    opts.Name,
			Client:  opts.Client,
			URL:     strings.TrimRight(opts.BaseURL, "/") + "/chat/completions",
			Header:  h,
			Secret:  opts.APIKey,
			Timeout: opts.Timeout,
			MaxTime: opts.MaxCallTime,
			Retry:   opts.Retry,
		},
	}
}

// Name is the spec the model was chosen by.
func (m *Model) Name() string { return m.opts.Name }

// Stream sends req and streams the reply. A try that fails before anything
// was passed to onDelta is retried as the Retry option allows (429, 5xx,
// connection errors, a stream broken early); after that a failure ends the
// call. A 404 wraps engine.ErrModelUnavailable (see sse.Call.Do).
func (m *Model) Stream(ctx context.Context, req *engine.Request, onDelta func(engine.Delta) error) (*engine.Response, error) {
	body, err := m.encode(req)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", m.opts.Name, err)
	}
	var resp *engine.Response
	err = m.call.Do(ctx, body, func(ctx context.Context, r *sse.Reader, started *bool) error {
		s := stream{onDelta: onDelta, started: started}
		var err error
		resp, err = s.read(r)
		return err
	})
	if err != nil {
		return nil, err
	}
	resp.Usage.ContextWindow = m.opts.ContextWindow
	return resp, nil
}

// isOpenAI reports whether base is OpenAI's own API, which wants
// max_completion_tokens.
func isOpenAI(base string) bool {
	u, err := url.Parse(base)
	return err == nil && u.Hostname() == "api.openai.com"
}
