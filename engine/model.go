package engine

import (
	"context"
	"encoding/json"
	"errors"
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
	// see them is sent each one's StandIn instead.
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
}

// A Delta is a streamed piece of the model's reply. Exactly one field is set.
type Delta struct {
	Text     string
	Thinking string
}

// Stop reasons a Response can carry.
const (
	StopEndTurn   = "end_turn"
	StopToolUse   = "tool_use"
	StopMaxTokens = "max_tokens"
	StopRefusal   = "refusal"
)

// A Response is the model's whole reply to one Request.
type Response struct {
	Text       string
	Thinking   string
	ToolCalls  []ToolCall
	StopReason string
	Usage      Usage
	// Replay is provider data to send back with this reply in later
	// requests (see Message.Replay).
	Replay json.RawMessage
}

// Usage counts the tokens of one model call.
type Usage struct {
	InputTokens  int `json:"inputTokens"`
	OutputTokens int `json:"outputTokens"`
	// ContextWindow is the model's context size when known, else 0.
	ContextWindow int `json:"contextWindow,omitempty"`
}

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
}

// ModelFacts looks up what is known of the model a spec
// ("anthropic:claude-sonnet-4-5") names. cmd/coda keeps the catalog.
type ModelFacts func(spec string) ModelFact
