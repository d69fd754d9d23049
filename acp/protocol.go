package acp

import (
	"encoding/json"
	"github.com/coda-acp/coda/acp/pickers"

	statestore "github.com/coda-acp/coda/store"
)

// Wire types, hand-written for what coda serves: each method's params
// (what coda reads of them) and result, named as the ACP schema names them
// (protocol version 1), so methods_test.go can check each result against
// its definition. Field names follow the schema; Go names follow Go.
//
// A field tagged jsonrpc:"required" must be there and not null: the method
// table refuses its absence (-32602) before the handler runs.
//
// Several results keep their members in alphabetical order: that is the
// order they have always had on the wire (they were once maps), and the
// session transcripts hold coda's lines byte for byte.

// ProtocolVersion is the ACP version coda speaks.
const ProtocolVersion = 1

// initialize

type initializeRequest struct {
	ProtocolVersion    *int            `json:"protocolVersion" jsonrpc:"required"`
	ClientCapabilities json.RawMessage `json:"clientCapabilities"`
	ClientInfo         json.RawMessage `json:"clientInfo"`
}

type initializeResponse struct {
	AgentCapabilities agentCapabilities `json:"agentCapabilities"`
	AgentInfo         implementation    `json:"agentInfo"`
	AuthMethods       []authMethod      `json:"authMethods"`
	ProtocolVersion   int               `json:"protocolVersion"`
}

type agentCapabilities struct {
	Meta                codaMeta[codaCapabilities] `json:"_meta"`
	LoadSession         bool                       `json:"loadSession"`
	MCPCapabilities     mcpCapabilities            `json:"mcpCapabilities"`
	PromptCapabilities  promptCapabilities         `json:"promptCapabilities"`
	SessionCapabilities sessionCapabilities        `json:"sessionCapabilities"`
}

// codaMeta is a _meta object: coda's own members, under "coda".
type codaMeta[T any] struct {
	Coda T `json:"coda"`
}

// codaCapabilities are agentCapabilities._meta.coda (DESIGN §8): what a
// client of coda's final answers needs to know.
type codaCapabilities struct {
	FinalOutput bool       `json:"finalOutput"` // an agent with no stage that answers gives none
	Formats     []string   `json:"formats"`     // the labels coda checks itself
	JSONSchema  bool       `json:"jsonSchema"`
	Output      publicSpec `json:"output"` // the launch spec in effect; {} when none answers
	Validators  []string   `json:"validators"`
	// PromptQueueing: a prompt sent while a turn runs is queued and
	// answered after it; Steering: one sent with _meta.coda.steer joins
	// the running turn (queue.go).
	PromptQueueing bool `json:"promptQueueing"`
	Steering       bool `json:"steering"`
}

// publicSpec is an output spec as advertised: what a client needs to know
// of it.
type publicSpec struct {
	Example      string `json:"example,omitempty"`
	Format       string `json:"format,omitempty"`
	Instructions string `json:"instructions,omitempty"`
	JSONSchema   bool   `json:"jsonSchema,omitempty"`
	Validator    string `json:"validator,omitempty"` // the script's file name
}

type mcpCapabilities struct {
	HTTP bool `json:"http"`
	SSE  bool `json:"sse"`
}

type promptCapabilities struct {
	Audio           bool `json:"audio"`
	EmbeddedContext bool `json:"embeddedContext"`
	Image           bool `json:"image"`
}

// sessionCapabilities are the session methods coda serves beyond new,
// prompt and cancel: a capability is an empty object when served, left out
// when not.
type sessionCapabilities struct {
	AdditionalDirectories *struct{} `json:"additionalDirectories,omitempty"`
	Close                 *struct{} `json:"close,omitempty"`
	Delete                *struct{} `json:"delete,omitempty"`
	Fork                  *struct{} `json:"fork,omitempty"` // UNSTABLE (fork.go)
	List                  *struct{} `json:"list,omitempty"`
	Resume                *struct{} `json:"resume,omitempty"`
}

type implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title"`
	Version string `json:"version"`
}

// authMethod is an AuthMethodAgent: the agent handles it itself.
type authMethod struct {
	Description string `json:"description"`
	ID          string `json:"id"`
	Name        string `json:"name"`
}

// authenticate

type authenticateRequest struct {
	MethodID *string `json:"methodId" jsonrpc:"required"`
}

type authenticateResponse struct{}

// session/new, load, resume

type newSessionRequest struct {
	Cwd                   *string         `json:"cwd" jsonrpc:"required"`
	AdditionalDirectories []string        `json:"additionalDirectories"`
	MCPServers            json.RawMessage `json:"mcpServers"` // read by mcpservers.Parse, which names a bad field
	Meta                  *requestMeta    `json:"_meta"`
}

// requestMeta is the _meta of a request; coda reads _meta.coda.output
// and _meta.coda.commentary (commentary.go).
type requestMeta struct {
	Coda *struct {
		Output     json.RawMessage `json:"output"`
		Commentary json.RawMessage `json:"commentary"`
		// Steer: a prompt that joins the running turn (queue.go).
		Steer bool `json:"steer"`
	} `json:"coda"`
	// Steering is the same as the field spells it elsewhere
	// (_meta.steering: true).
	Steering bool `json:"steering"`
	// Traceparent and Tracestate are W3C trace context, root keys of _meta
	// as ACP's extensibility page has clients propagate it (and MCP's):
	// a prompt's is the parent of its turn's span (internal/telemetry).
	Traceparent metaString `json:"traceparent"`
	Tracestate  metaString `json:"tracestate"`
}

// metaString is a string of _meta that coda reads but does not require:
// any other JSON value there is taken as "", never refused.
type metaString string

func (m *metaString) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*m = metaString(s)
	}
	return nil
}

// trace is the trace context the request's _meta carries.
func (m *requestMeta) trace() (traceparent, tracestate string) {
	if m == nil {
		return "", ""
	}
	return string(m.Traceparent), string(m.Tracestate)
}

// steer reports whether a prompt asks to join its session's running turn.
func (m *requestMeta) steer() bool {
	return m != nil && (m.Steering || m.Coda != nil && m.Coda.Steer)
}

func (m *requestMeta) output() json.RawMessage {
	if m == nil || m.Coda == nil || isNull(m.Coda.Output) {
		return nil
	}
	return m.Coda.Output
}

type newSessionResponse struct {
	Meta          *warningsMeta  `json:"_meta,omitempty"`
	ConfigOptions []configOption `json:"configOptions"`
	Modes         modeState      `json:"modes"`
	SessionID     string         `json:"sessionId"`
}

// warningsMeta is the _meta of a response that has warnings: what the
// request did that the user should know of (a retired check, an MCP server
// that did not start, a session that could not be saved).
type warningsMeta = codaMeta[codaWarnings]

type codaWarnings struct {
	Warnings []string `json:"warnings"`
}

// withWarnings is the _meta for warnings; nil when there are none.
func withWarnings(warnings []string) *warningsMeta {
	if len(warnings) == 0 {
		return nil
	}
	return &warningsMeta{Coda: codaWarnings{Warnings: warnings}}
}

// loadSessionRequest is session/load's params.
type loadSessionRequest struct {
	SessionID             *string         `json:"sessionId" jsonrpc:"required"`
	Cwd                   *string         `json:"cwd" jsonrpc:"required"`
	AdditionalDirectories []string        `json:"additionalDirectories"`
	MCPServers            json.RawMessage `json:"mcpServers"`
	Meta                  *requestMeta    `json:"_meta"` // coda reads _meta.coda.commentary
}

// resumeSessionRequest is session/resume's: the same as load's.
type resumeSessionRequest = loadSessionRequest

// loadSessionResponse is what session/load answers, once the history is
// replayed.
type loadSessionResponse struct {
	Meta          *warningsMeta  `json:"_meta,omitempty"`
	ConfigOptions []configOption `json:"configOptions"`
	Modes         modeState      `json:"modes"`
}

// resumeSessionResponse is what session/resume answers: the same as load.
type resumeSessionResponse loadSessionResponse

// The pickers' wire types are acp/pickers'.
type (
	configOption = pickers.Option
	selectOption = pickers.Choice
	modeState    = pickers.ModeState
)

// session/list

type listSessionsRequest struct {
	Cwd    *string `json:"cwd"`
	Cursor *string `json:"cursor"`
}

type listSessionsResponse struct {
	NextCursor string         `json:"nextCursor,omitempty"`
	Sessions   []*sessionInfo `json:"sessions"`
}

// session/set_config_option, set_mode

type setSessionConfigOptionRequest struct {
	SessionID *string         `json:"sessionId" jsonrpc:"required"`
	ConfigID  *string         `json:"configId" jsonrpc:"required"`
	Value     json.RawMessage `json:"value"` // a string; setConfigOption says what the option takes
}

type setSessionConfigOptionResponse struct {
	Meta          *warningsMeta  `json:"_meta,omitempty"`
	ConfigOptions []configOption `json:"configOptions"`
}

type setSessionModeRequest struct {
	SessionID *string `json:"sessionId" jsonrpc:"required"`
	ModeID    *string `json:"modeId" jsonrpc:"required"`
}

type setSessionModeResponse struct {
	Meta *warningsMeta `json:"_meta,omitempty"`
}

// session/prompt

type promptRequest struct {
	SessionID *string        `json:"sessionId" jsonrpc:"required"`
	Prompt    []contentBlock `json:"prompt" jsonrpc:"required"`
	Meta      *requestMeta   `json:"_meta"`
}

type contentBlock struct {
	Type     string            `json:"type"`
	Text     string            `json:"text"`
	URI      string            `json:"uri"`
	Name     string            `json:"name"`
	Title    string            `json:"title"`
	MimeType string            `json:"mimeType"`
	Data     string            `json:"data"` // an image's bytes, base64
	Resource *embeddedResource `json:"resource"`
}

type embeddedResource struct {
	URI      string  `json:"uri"`
	Text     *string `json:"text"`
	Blob     *string `json:"blob"`
	MimeType string  `json:"mimeType"`
}

type promptResponse struct {
	Meta       codaMeta[promptOutcome] `json:"_meta"`
	StopReason string                  `json:"stopReason"`
	Usage      turnUsage               `json:"usage"` // the turn's tokens (usage.go)
}

// promptOutcome is PromptResponse._meta.coda (DESIGN §8): how the turn
// ended, or the slash command it was. A failed turn's error carries it as
// its data.
type promptOutcome struct {
	// Command is the slash command the prompt was (status "command"); a
	// command's answer has no run, so no flags and no runId.
	Command string `json:"command,omitempty"`
	// FinalOutput is the answer record of DESIGN §1; null without one.
	FinalOutput *statestore.Answer `json:"finalOutput"`
	Flags       []string           `json:"flags,omitzero"` // a turn's are never nil
	// NoAnswer says why a run has no answer; Unavailable is the model's
	// reason when it declared the answer unavailable.
	NoAnswer    string   `json:"noAnswer,omitempty"`
	RunID       string   `json:"runId,omitempty"`
	Status      string   `json:"status"`
	Unavailable string   `json:"unavailable,omitempty"`
	Warnings    []string `json:"warnings"`
}

// turnPanicked is the error data of a prompt whose turn panicked.
type turnPanicked struct {
	RunID string `json:"runId"`
}

// session/close, delete, cancel; $/cancel_request

type closeSessionRequest struct {
	SessionID *string `json:"sessionId" jsonrpc:"required"`
}

type closeSessionResponse struct{}

type deleteSessionRequest struct {
	SessionID *string `json:"sessionId" jsonrpc:"required"`
}

type deleteSessionResponse struct{}

type cancelNotification struct {
	SessionID *string `json:"sessionId" jsonrpc:"required"`
}

type cancelRequestNotification struct {
	RequestID json.RawMessage `json:"requestId" jsonrpc:"required"`
}

// Session updates sent off the hot path (updates.go encodes the streamed
// ones by hand): each is a SessionUpdate variant, its discriminator
// sessionUpdate beside its members, in the order they have always had.

type availableCommandsUpdate struct {
	AvailableCommands []availableCommand `json:"availableCommands"`
	SessionUpdate     string             `json:"sessionUpdate"` // available_commands_update
}

type availableCommand struct {
	Description string        `json:"description"`
	Input       *commandInput `json:"input,omitempty"`
	Name        string        `json:"name"`
}

type commandInput struct {
	Hint string `json:"hint"`
}

type configOptionUpdate struct {
	ConfigOptions []configOption `json:"configOptions"`
	SessionUpdate string         `json:"sessionUpdate"` // config_option_update
}

type currentModeUpdate struct {
	CurrentModeID string `json:"currentModeId"`
	SessionUpdate string `json:"sessionUpdate"` // current_mode_update
}

type sessionInfoUpdate struct {
	SessionUpdate string `json:"sessionUpdate"` // session_info_update
	Title         string `json:"title"`
}

func isNull(raw json.RawMessage) bool { return len(raw) == 0 || string(raw) == "null" }
