// Package llm is what one model call is, as the engine and every provider
// (engine/provider/...) speak it: the Model interface, a call's Request and
// streamed Response, the messages and tool calls of a conversation, the
// reasoning effort levels (DESIGN §16), the mechanisms that shape an
// answer at the source (Shapes, ReplyFormat: DESIGN §17), the cap on tool
// arguments while they stream (ArgsBuffer), a prompt's images (encoded and
// uploaded once a turn), and the errors a provider wraps so that the
// engine knows what to try next. It knows nothing of stages, turns or the
// protocol: a provider imports it, never the engine.
package llm

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/coda-acp/coda/internal/answer"
	"github.com/coda-acp/coda/internal/prices"
)

// A Model is one configured LLM. Providers (engine/provider/...) implement it;
// the stage loop calls Stream once per model call.
type Model interface {
	// Name is the spec the model was chosen by, such as "openai:gpt-5.1".
	Name() string
	// Stream sends req and calls onDelta for each streamed piece of text or
	// reasoning, in order, before returning the whole response. An error from
	// onDelta stops the stream and is returned.
	Stream(ctx context.Context, req *Request, onDelta func(Delta) error) (*Response, error)
}

// Role says who wrote a Message.
type Role string

const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool" // a tool's result, answering the assistant's ToolCall with ToolCallID
)

// A Message is one entry of the conversation sent to a model.
type Message struct {
	Role      Role
	Text      string
	Thinking  string     // assistant reasoning, kept for providers that want it back
	ToolCalls []ToolCall // assistant only

	// Replay is what the provider asked to have sent back with this
	// message (Anthropic's signed thinking blocks); opaque to the engine.
	Replay json.RawMessage

	// Images go with a user message, before its text; a model that cannot
	// see them is sent each one's stand-in instead (TextWithStandIns).
	Images []Image

	// Tool results only.
	ToolCallID string
	ToolName   string
	IsError    bool
}

// A ToolCall is the model asking for a tool.
type ToolCall struct {
	ID        string
	Name      string
	Arguments json.RawMessage // a JSON object; "{}" when the model sent none
	// Dropped counts the bytes of arguments past the cap for the tool
	// (ArgsCap) that were not kept. When it is not 0, Arguments holds only
	// their first bytes (not JSON), and the call is refused unrun.
	Dropped int
}

// Size is the size of the arguments the model sent, kept or not.
func (tc *ToolCall) Size() int { return len(tc.Arguments) + tc.Dropped }

// A ToolSpec is a tool as the model is told of it.
type ToolSpec struct {
	Name        string
	Description string
	Schema      json.RawMessage // JSON Schema of the arguments object
	// Strict asks the provider to guarantee that the arguments match
	// Schema (OpenAI and Anthropic strict tools). The engine sets it only
	// when Schema already fits the provider's strict subset exactly
	// (DESIGN §17); a provider without strict tools ignores it.
	Strict bool
}

// A Request is one model call.
type Request struct {
	System   string
	Messages []Message
	Tools    []ToolSpec
	// Caller names the worker or child making the call; zero for the
	// turn's own run. Providers ignore it; the script model serves each
	// caller its own turns.
	Caller Caller

	// Effort is the reasoning effort asked for (DESIGN §16): "" leaves it
	// to the provider's and model's defaults; otherwise one of EffortOff,
	// EffortLow, EffortMedium, EffortHigh or a model's own extra level
	// (EffortMinimal, EffortXHigh, EffortMax). Each provider maps it onto
	// its API.
	Effort string
	// ToolChoice, when set, names the one tool the model must call
	// (DESIGN §17: the answer call forced). A provider whose API forbids a
	// named tool choice together with the thinking it was asked for sends
	// "auto" instead.
	ToolChoice string
	// Reply, when set, asks for the reply itself in a constrained shape:
	// the call whose reply is taken as the answer (DESIGN §17). Nil leaves
	// the reply free.
	Reply *ReplyFormat

	// Params are the stage's model parameters (DESIGN §25), by the
	// blueprint's names: each provider sends the common ones (temperature,
	// top_p, top_k, max_output_tokens, seed, stop) under its API's own
	// names and the rest as written (engine/provider's WithParams). Nil
	// sends none.
	Params map[string]any
	// Timeout bounds the whole call, every try included, over the
	// provider's own limit (the stage's request_timeout_secs); 0 leaves
	// the provider's.
	Timeout time.Duration

	// CacheKey is the same for every call of a session (DESIGN §23), for
	// the APIs whose prompt cache is routed by a key (OpenAI's
	// prompt_cache_key, at most 64 characters); "" sends none.
	CacheKey string
	// CachedPrefix counts the leading Messages that repeat the previous
	// turn's last request (the session's transcript): a provider that
	// places cache breakpoints puts one where they end (Anthropic); 0
	// when there are none.
	CachedPrefix int
}

// ParamMechanismPrefix starts the mechanism (MechanismError.Mechanism) of
// a server's refusal of one of a request's Params; ParamMechanism names it.
const ParamMechanismPrefix = "param:"

// ParamMechanism is the mechanism a server's refusal of the stage
// parameter name is: the engine sends the stage's parameters without it
// from then on.
func ParamMechanism(name string) string { return ParamMechanismPrefix + name }

// Reasoning effort levels (Request.Effort).
const (
	EffortOff     = "off"
	EffortMinimal = "minimal"
	EffortLow     = "low"
	EffortMedium  = "medium"
	EffortHigh    = "high"
	EffortXHigh   = "xhigh"
	EffortMax     = "max"
)

// A ReplyFormat asks a provider for a reply constrained to JSON: with
// Schema, a value that the schema accepts (OpenAI text.format or
// response_format json_schema, Gemini responseJsonSchema, Ollama format,
// Anthropic output_config.format); without, any JSON value (json_object,
// responseMimeType application/json, Ollama "json").
type ReplyFormat struct {
	Name   string          // a name for the schema where the API wants one ("answer")
	Schema json.RawMessage // nil: any JSON
	// Strict is set only when Schema fits the provider's strict subset
	// exactly; coda never rewrites a schema to make it fit.
	Strict bool
}

// Shapes are the mechanisms that shape an answer at the source (DESIGN
// §17) a model takes for one request, as its provider knows them.
type Shapes struct {
	// Strict names the strict subset its strict tools and reply schemas
	// take (StrictOpenAI, StrictAnthropic); "" when it has none.
	Strict string
	// ToolChoice: a named Request.ToolChoice is honoured for this request
	// (not by an API without one, nor by one that forbids it with the
	// thinking this request turns on).
	ToolChoice bool
	// Reply: a constrained reply with a schema (Request.Reply); ReplyAny:
	// one without, any JSON value, too.
	Reply, ReplyAny bool
}

// A Shaper is a Model that says which of the answer's mechanisms it takes
// for a request (a provider: engine/provider/...). A Model that is not one
// is sent none of them but a typed submit_output.
type Shaper interface {
	Shapes(req *Request) Shapes
}

// Strict subsets a provider names (Shapes.Strict).
const (
	StrictOpenAI    = answer.StrictOpenAI
	StrictAnthropic = answer.StrictAnthropic
)

// A Delta is a streamed piece of the model's reply. Exactly one field is set.
type Delta struct {
	Text     string
	Thinking string
}

// Stop reasons a Response can carry. StopMaxTokens is every API's "cut at
// the token limit" (finish_reason length, stop_reason max_tokens,
// incomplete_details max_output_tokens, finishReason MAX_TOKENS).
const (
	StopEndTurn   = "end_turn"
	StopToolUse   = "tool_use"
	StopMaxTokens = "max_tokens"
	StopRefusal   = "refusal"
)

// MaxWindow is the largest context window coda takes, in tokens, from a
// server (a listing, Ollama's /api/show, a provider's report) or a
// catalog: 2^30, a hundred times the largest window any model offers
// (10M tokens), and small enough that the fitting's arithmetic on it
// (window × 85 %) is far from overflowing. A larger one is taken as this.
const MaxWindow = 1 << 30

// Window is n, a context window read from a server, held to what coda
// takes: 0 (not known) when n is not positive (or not a number),
// MaxWindow when n is past it. A float is held before it is converted,
// since one past int's range converts to anything.
func Window[N ~int | ~int64 | ~float64](n N) int {
	if !(n > 0) {
		return 0
	}
	if n >= MaxWindow {
		return MaxWindow
	}
	return int(n)
}

// A Response is the model's whole reply to one Request.
type Response struct {
	Text       string
	Thinking   string
	ToolCalls  []ToolCall
	StopReason string
	Usage      Usage
	// Replay is provider data to send back with this reply in later
	// requests (see Message.Replay): Anthropic's signed thinking blocks,
	// the Responses API's encrypted reasoning items, Gemini's thought
	// signatures, an OpenAI-compatible server's tool_calls extra_content.
	Replay json.RawMessage
	// Refusal is the model's own refusal (OpenAI's refusal field), with
	// StopReason StopRefusal; "" otherwise.
	Refusal string
}

// Usage counts the tokens of one model call.
type Usage struct {
	InputTokens  int `json:"inputTokens"`
	OutputTokens int `json:"outputTokens"`
	// CacheReadTokens and CacheWriteTokens are the prompt tokens read from
	// and written to the provider's prompt cache, where it reports them;
	// InputTokens counts every prompt token, cached or not.
	CacheReadTokens  int `json:"cacheReadTokens,omitempty"`
	CacheWriteTokens int `json:"cacheWriteTokens,omitempty"`
	// ReasoningTokens are the output tokens spent reasoning, where reported.
	ReasoningTokens int `json:"reasoningTokens,omitempty"`
	// ContextWindow is the model's context size when known, else 0.
	ContextWindow int `json:"contextWindow,omitempty"`
}

// ErrMechanismRefused is wrapped by providers when the server refuses a
// way of shaping the answer the request asked for (an HTTP 400 naming
// response_format, strict, tool_choice or the like): the engine makes the
// call again with the next weaker mechanism and remembers it for the
// session (DESIGN §17). A provider wraps it in a *MechanismError.
var ErrMechanismRefused = errors.New("the server refused a structured-output mechanism")

// A MechanismError says which mechanism a server refused.
type MechanismError struct {
	// Mechanism is "strict" (strict tools or schema), "tool_choice" (a
	// named tool choice) or "reply_format" (a constrained reply).
	Mechanism string
	Err       error // the server's error, key masked
}

func (e *MechanismError) Error() string {
	return e.Mechanism + " refused: " + e.Err.Error()
}

func (e *MechanismError) Unwrap() []error { return []error{ErrMechanismRefused, e.Err} }

// ErrModelUnavailable is wrapped by providers when a model cannot serve at
// all (not configured, or "model not found"); the stage then tries its next
// fallback model.
var ErrModelUnavailable = errors.New("model unavailable")

// Models turns a model spec ("anthropic:claude-sonnet-4-5", "script:PATH")
// into a Model. cmd/coda implements it from the config file. An error
// wrapping ErrModelUnavailable means "try the next one".
type Models interface {
	Model(spec string) (Model, error)
}

// A ModelFact is what is known of a model before calling it.
type ModelFact struct {
	ContextWindow int // tokens; 0 when unknown
	// NoTools says why the model cannot call tools; "" when it is not
	// known to lack them.
	NoTools string
	// Efforts are the reasoning effort levels the model takes, in order
	// (EffortOff first where it can be turned off); nil when unknown or
	// when it does not reason.
	Efforts []string
	// NoEffort says the model does not reason: a call of it is sent no
	// effort at all (effort.go).
	NoEffort bool
	// Structured is the strongest mechanism that shapes an answer the
	// model is asked through (outputspec.Structured*: the config's
	// [providers.NAME] structured); "" or "auto" leaves it to what the
	// model's API takes (shape.go).
	Structured string
	// Price is what the model's tokens cost (the catalog's, or the
	// config's); nil when unknown, which a cost never counts as zero.
	Price *prices.Price
}

// ModelFacts looks up what is known of the model a spec
// ("anthropic:claude-sonnet-4-5") names. cmd/coda keeps the catalog.
type ModelFacts func(spec string) ModelFact

// A Caller names the sub-run making a model call: its name, with its
// parents' when nested ("c1/w2"), and the fan_out task id it was given.
// The turn's own run is the zero Caller.
type Caller struct {
	Name string
	Task string
}

// A Windowed model says its context window before it is called, where the
// provider decides it (Ollama: the num_ctx it sends); 0 when it cannot say.
type Windowed interface {
	ContextWindow(ctx context.Context) int
}

// ErrToolsUnsupported is wrapped by providers when the server refuses a
// request because the model cannot call tools (Ollama's "does not support
// tools", llama.cpp without --jinja, vLLM without auto tool choice).
var ErrToolsUnsupported = errors.New("the model does not support tools")

// Add adds the tokens of one call.
func (u *Usage) Add(c Usage) {
	u.InputTokens += c.InputTokens
	u.OutputTokens += c.OutputTokens
	u.CacheReadTokens += c.CacheReadTokens
	u.CacheWriteTokens += c.CacheWriteTokens
	u.ReasoningTokens += c.ReasoningTokens
	u.ContextWindow = max(u.ContextWindow, c.ContextWindow)
}
