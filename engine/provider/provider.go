// Package provider is what every model provider (engine/provider/...)
// shares above the wire: one Options for all of them, its defaults filled
// in one place, and the listing of a server's models.
//
// A provider package declares `type Options = provider.Options` and builds
// its HTTP call with Options.Call; the knobs only some APIs take (API,
// NumCtx, ThinkingBudget, NoCache) are read by those and ignored by the
// rest, so that cmd/coda fills one struct from a [providers.NAME] table
// whatever its kind.
package provider

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/provider/sse"
)

// Options configure a model of any provider. The zero value of each field
// is its default.
type Options struct {
	Name    string            // the spec the model was chosen by; default KIND:MODEL
	BaseURL string            // the API's root; default the provider's own endpoint
	APIKey  string            // empty sends none (Ollama, llama.cpp)
	Headers map[string]string // extra headers (OpenRouter's X-Title, a gateway's own)

	// MaxTokens caps the reply; 0 leaves it to the server, or to the
	// provider's default where the API requires one (Anthropic).
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
	// Budget bounds what one reply may keep, in bytes (sse.Budget); a
	// field left 0 takes its default.
	Budget sse.Budget

	// ContextWindow is reported in each Response's Usage; 0 when unknown.
	ContextWindow int
	// NoVision says the model cannot see images: each is sent as a line of
	// text instead (llm.Image.StandIn).
	NoVision bool

	// Effort is the reasoning effort used when a request names none
	// (llm.Request.Effort); "" leaves it to the model.
	Effort string
	// Efforts are the levels the model takes (llm.ModelFact.Efforts,
	// from the catalog); nil when unknown. A provider reads a non-empty
	// list as "this model reasons".
	Efforts []string

	// Log takes the warnings a provider says once (a setting it had to
	// drop, a context it had to cap); nil discards them.
	Log *slog.Logger

	// API is the wire API of kind "openai": "chat" (chat completions, the
	// default) or "responses".
	API string
	// NumCtx caps the context Ollama is asked to allocate (options.num_ctx);
	// 0 means the model's own length, as /api/show reports it.
	NumCtx int
	// ThinkingBudget turns on Anthropic's budgeted extended thinking with
	// this many tokens, for models that still take it; 0 leaves it off.
	ThinkingBudget int
	// NoCache turns prompt caching off where a provider asks for it
	// (Anthropic's cache_control breakpoints).
	NoCache bool
	// Thinking is how the model takes an effort, a catalog fact read by
	// the APIs that have more than one way (anthropic.Thinking*: budget,
	// adaptive, adaptive-on, always; gemini.Thinking*: level, budget); ""
	// when unknown.
	Thinking string
	// NoForcedTool says the model refuses a named tool choice whatever
	// its thinking (Anthropic's Claude 5.5 and Fable 5 models, a catalog
	// fact): the provider asks for the tool in auto mode instead.
	NoForcedTool bool
	// Server names the software behind a chat completions endpoint where
	// it has a constrained-output field of its own (ServerVLLM,
	// ServerLlamaCpp): a constrained reply is asked in that field. ""
	// is any OpenAI-style server.
	Server string
}

// Servers of chat completions with a field of their own for a constrained
// reply (Options.Server).
const (
	ServerVLLM     = "vllm"
	ServerLlamaCpp = "llama.cpp"
)

// APIs of kind "openai" (Options.API).
const (
	APIChat      = "chat"
	APIResponses = "responses"
)

// WithDefaults returns o with the defaults filled in: Name kind+":"+model,
// BaseURL base, Timeout sse.DefaultTimeout and a Log that discards.
func (o Options) WithDefaults(kind, model, base string) Options {
	if o.Name == "" {
		o.Name = kind + ":" + model
	}
	if o.BaseURL == "" {
		o.BaseURL = base
	}
	o.BaseURL = strings.TrimRight(o.BaseURL, "/")
	if o.Timeout <= 0 {
		o.Timeout = sse.DefaultTimeout
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	o.Budget = o.Budget.WithDefaults()
	return o
}

// Header is o.Headers as an http.Header, with the credential set under
// key (such as "Authorization", with "Bearer " as prefix) when o has one.
func (o *Options) Header(key, prefix string) http.Header {
	h := http.Header{}
	for k, v := range o.Headers {
		h.Set(k, v)
	}
	if o.APIKey != "" && key != "" {
		h.Set(key, prefix+o.APIKey)
	}
	return h
}

// Call is the streaming POST to o.BaseURL+path, with header h (see
// Header), o's time limits and retry, and o's key masked in every error.
func (o *Options) Call(path string, h http.Header) sse.Call {
	return sse.Call{
		Name:    o.Name,
		Client:  o.Client,
		URL:     o.BaseURL + path,
		Header:  h,
		Secret:  o.APIKey,
		Timeout: o.Timeout,
		MaxTime: o.MaxCallTime,
		Retry:   o.Retry,
	}
}

// EffortOf is the effort a request asks for: its own, else o's default.
func (o *Options) EffortOf(req *llm.Request) string {
	if req.Effort != "" {
		return req.Effort
	}
	return o.Effort
}

// Reasons reports whether the catalog says the model reasons.
func (o *Options) Reasons() bool { return len(o.Efforts) > 0 }

// A Once says each of its warnings once per process.
type Once struct{ said sync.Map }

// Warn logs msg with args at warning level the first time key is given.
func (o *Once) Warn(log *slog.Logger, key, msg string, args ...any) {
	if _, seen := o.said.LoadOrStore(key, true); !seen {
		log.Warn(msg, args...)
	}
}

// Listing a server's models (the editor's Model picker, DESIGN §16).

// MaxListed is the most entries a Lister returns: a server listing
// thousands (OpenRouter) is cut, not held.
const MaxListed = 200

// ListTimeout is the time a caller gives a listing (the context it passes);
// a Lister sets none of its own.
const ListTimeout = 5 * time.Second

// A Listed model is one a server offers, with what the listing says of it.
type Listed struct {
	ID string // as the server names it: the MODEL of PROVIDER:MODEL
	// ContextWindow is the model's window where the listing gives it
	// (OpenRouter's context_length, vLLM's max_model_len); else 0.
	ContextWindow int
	// NoTools says why the model cannot be a chat model with tools (an
	// embedding model, audio or images only, a listing that says it takes
	// no tools); "" when nothing says so.
	NoTools string
	// Embedding marks a model that does not chat at all; a picker leaves it
	// out.
	Embedding bool
}

// A Lister lists the models a provider's server offers: at most MaxListed,
// within the time the caller's context allows. Errors carry no key.
type Lister interface {
	List(ctx context.Context) ([]Listed, error)
}

// notChat are the name fragments of OpenAI-style models that do not chat
// (OpenAI's model list: embeddings, speech, transcription, images,
// moderation, completions-only).
var notChat = []string{"embed", "whisper", "tts", "dall-e", "gpt-image", "moderation", "transcribe", "davinci", "babbage", "sora", "rerank"}

// Embedding reports whether a model's id names one that does not chat:
// an embedding, speech, image, moderation or completions-only model.
func Embedding(id string) bool {
	id = strings.ToLower(id)
	for _, s := range notChat {
		if strings.Contains(id, s) {
			return true
		}
	}
	return false
}
