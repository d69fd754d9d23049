// Package openai is the llm.Model for OpenAI's chat completions API,
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
	"net/url"
	"sync/atomic"

	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/provider"
	"github.com/coda-acp/coda/engine/provider/sse"
	"github.com/coda-acp/coda/internal/textcut"
)

// DefaultBaseURL is OpenAI's own endpoint; paths are appended to it as the
// vendors' SDKs do.
const DefaultBaseURL = "https://api.openai.com/v1"

// Options configure a Model (engine/provider.Options). The zero value
// talks to OpenAI without a key. BaseURL defaults to DefaultBaseURL, and
// "/chat/completions" is appended; MaxTokens goes to OpenAI's own API as
// max_completion_tokens (its reasoning models refuse max_tokens), to every
// other server as max_tokens.
type Options = provider.Options

// A Model is one model behind a chat completions endpoint. It is safe for
// concurrent use.
type Model struct {
	model string
	opts  Options
	call  sse.Call

	// toolsNoEffort is set once the server refused reasoning effort with
	// function tools for this model (see setEffort).
	toolsNoEffort atomic.Bool
	once          provider.Once
}

// New returns the model named model (as the server names it, e.g. "gpt-5.1"
// or "llama3.1:8b").
func New(model string, opts Options) *Model {
	opts = opts.WithDefaults("openai", model, DefaultBaseURL)
	return &Model{
		model: model,
		opts:  opts,
		call:  opts.Call("/chat/completions", opts.Header("Authorization", "Bearer ")),
	}
}

// Name is the spec the model was chosen by.
func (m *Model) Name() string { return m.opts.Name }

// Shapes are what chat completions takes (DESIGN §17): strict functions
// and json_schema in OpenAI's strict subset, a named tool_choice (unless
// the catalog says the model refuses one), response_format json_schema or
// json_object (or the server's own field: replyFormat). A compatible
// server that takes less refuses it, and is asked without
// (llm.MechanismError).
func (m *Model) Shapes(*llm.Request) llm.Shapes {
	return llm.Shapes{Strict: llm.StrictOpenAI, ToolChoice: !m.opts.NoForcedTool, Reply: true, ReplyAny: true}
}

// Stream sends req and streams the reply. A try that fails before anything
// was passed to onDelta is retried as the Retry option allows (429, 5xx,
// connection errors, a stream broken early); after that a failure ends the
// call. A 404 wraps llm.ErrModelUnavailable (see sse.Call.Do).
//
// A server's refusal of a mechanism the request asked for (a strict tool,
// the named tool choice, the reply's format) is an *llm.MechanismError,
// not tried again. A model that refuses reasoning effort with tools is
// asked once more with "none", and so from then on (setEffort).
func (m *Model) Stream(ctx context.Context, req *llm.Request, onDelta func(llm.Delta) error) (*llm.Response, error) {
	resp, err := m.stream(ctx, req, onDelta)
	if err != nil && len(req.Tools) > 0 && toolsEffortRefused(err) && !m.toolsNoEffort.Swap(true) {
		m.once.Warn(m.opts.Log, "effort-with-tools",
			"the server takes no reasoning effort with tools for this model: it is sent \"none\" from now on; set api = \"responses\" on the provider to reason with tools",
			"model", m.opts.Name)
		resp, err = m.stream(ctx, req, onDelta)
	}
	return resp, err
}

func (m *Model) stream(ctx context.Context, req *llm.Request, onDelta func(llm.Delta) error) (*llm.Response, error) {
	body, shaping, err := m.encode(req)
	if err == nil {
		api := provider.ParamsChat
		if isOpenAI(m.opts.BaseURL) {
			api = provider.ParamsChatOpenAI
		}
		body, err = provider.WithParams(api, req, body, &shaping)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", m.opts.Name, err)
	}
	var resp *llm.Response
	err = m.call.Within(req.Timeout).DoShaped(ctx, body, shaping, func(ctx context.Context, r *sse.Reader, started *bool) error {
		s := stream{onDelta: onDelta, started: started}
		m.opts.Budget.Start(&s.text, &s.thinking, &s.kept)
		s.refusal.Max, s.refusal.What = s.text.Max, "refusal"
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
// cacheKey is the prompt_cache_key a request to base sends: the session's
// key (llm.Request.CacheKey), which OpenAI combines with the prompt's
// prefix to route it to a machine that has that prefix cached
// (platform.openai.com/docs/guides/prompt-caching), cut to the 64
// characters it takes ("Invalid 'prompt_cache_key': string too long");
// none to other servers, some of which refuse a field they do not know
// (Gemini's OpenAI endpoint: "Unknown name").
func cacheKey(base string, req *llm.Request) string {
	if !isOpenAI(base) {
		return ""
	}
	return textcut.At(req.CacheKey, maxCacheKey)
}

// maxCacheKey is the longest prompt_cache_key OpenAI takes.
const maxCacheKey = 64

func isOpenAI(base string) bool {
	u, err := url.Parse(base)
	return err == nil && u.Hostname() == "api.openai.com"
}
