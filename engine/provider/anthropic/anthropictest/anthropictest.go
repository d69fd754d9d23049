// Package anthropictest is a fake Anthropic messages API for tests:
// POST /v1/messages streamed as the real one streams
// (https://docs.anthropic.com/en/docs/build-with-claude/streaming), and
// GET /v1/models, holding each request to the rules Anthropic documents
// and answering a broken one with the API's error body ({"type": "error",
// "error": {"type": "invalid_request_error", "message"}}). Tests script
// what the model does (Turn); the fake signs the thinking it sends,
// caches prompts as the API does, and records what it was sent.
//
// The rules it enforces, each with its source (rules.go keeps them as
// data: one named entry a rule, checked in order, the first broken
// answered and its name kept in Request.Rule):
//
//   - x-api-key (a wrong one is a 401) and anthropic-version are sent;
//   - the roles alternate, user first, no message is empty, and a
//     tool_result answers a tool_use of the assistant message before it;
//   - thinking {"type": "enabled", "budget_tokens"} only on models that
//     take a budget: Claude Opus 4.7 and later refuse it (""thinking.type.enabled"
//     is not supported for this model. Use "thinking.type.adaptive" and
//     "output_config.effort"…"); at least 1024, less than max_tokens;
//     {"type": "adaptive"} only on Claude 4.6 and later; {"type":
//     "disabled"} not on models that cannot stop thinking, nor on Claude
//     Sonnet 5.5, whose least is {"type": "between_tools"}, at effort high
//     or below (…/models/sonnet-5-5/whats-new-sonnet-5-5); output_config.effort
//     only at the levels the model takes
//     (https://docs.anthropic.com/en/docs/build-with-claude/adaptive-thinking,
//     …/effort, each model's what's-new page);
//   - tool_choice {"type": "tool"} or "any" is refused with thinking on,
//     asked for or the model's default ("Thinking may not be enabled when
//     tool_choice forces tool use"), and by the models that never take it;
//   - a thinking block goes back with the signature this server gave it,
//     for this model, its text unchanged ("Invalid `signature` in
//     `thinking` block");
//   - with thinking on (enabled, adaptive, between_tools, or the model's
//     default), a request that continues a tool loop (its last message
//     holds tool_result blocks) sends the assistant message of those
//     tool_use blocks back starting with a thinking or redacted_thinking
//     block: "During tool use, you must pass thinking blocks back to the
//     API for the last assistant message"
//     (https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking#preserving-thinking-blocks),
//     refused as the API refuses it ("Expected `thinking` or
//     `redacted_thinking`, but found `tool_use`. When `thinking` is
//     enabled, a final `assistant` message must start with a thinking
//     block…", as reported in anomalyco/opencode#3077 and
//     deepset-ai/haystack-core-integrations#2146). A reply this server
//     wrote without thinking (adaptive thinking may skip it) has none to
//     send, and is let through; a message it did not write is held to the
//     rule;
//   - at most 4 cache_control blocks, of type ephemeral, none on a
//     thinking block
//     (https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching);
//   - a strict tool's input_schema and output_config.format's schema keep
//     to the JSON Schema subset of structured outputs, at every level
//     (https://platform.claude.com/docs/en/build-with-claude/structured-outputs,
//     "JSON Schema limitations", which strict tool use shares:
//     https://platform.claude.com/docs/en/agents-and-tools/tool-use/strict-tool-use):
//     every object's additionalProperties set to false; no numerical
//     constraints (minimum, maximum, exclusiveMinimum, exclusiveMaximum,
//     multipleOf), no string constraints (minLength, maxLength), no array
//     constraints but minItems 0 or 1; enum of primitives only; no
//     external $ref, no allOf with $ref, no recursive definitions; string
//     formats from the documented list; patterns without backreferences,
//     lookaround or word boundaries ("If you use an unsupported feature,
//     you'll receive a 400 error with details");
//   - output_config.format is a json_schema; with NoStrict or
//     NoJSONOutputs, the server predates them and refuses the field
//     ("Extra inputs are not permitted");
//   - a top-level field the Messages API does not take is refused
//     ("seed: Extra inputs are not permitted");
//   - an image block's source is base64 (an image media_type, data) or a
//     file; a file source needs the Files API's beta header on the
//     request and names a file uploaded here, not deleted ("File not
//     found (404)"), of an image type ("Invalid file type (400)": the
//     Files guide's error handling).
//
// The Files API (https://docs.claude.com/en/docs/build-with-claude/files,
// https://docs.claude.com/en/api/files-create, …/api/files-delete), whose
// requests carry "anthropic-beta: files-api-2025-04-14":
//   - POST /v1/files takes multipart/form-data with the file, and answers
//     its metadata (id, type "file", filename, mime_type, size_bytes,
//     created_at, downloadable false);
//   - DELETE /v1/files/{file_id} answers {id, type "file_deleted"}; an
//     unknown id is a 404;
//   - the fake counts uploads, deletions and every request body's bytes
//     (Uploads, Deletes, Received), reading an upload as it streams;
//   - with NoFiles the server is a compatible one that refuses the beta
//     header, on any request, as the API refuses a beta it does not know
//     ("Unexpected value(s) … for the `anthropic-beta` header").
//
// It caches as the API does, closely enough to count: at each breakpoint
// the longest prefix written before is read, looking back over the 20
// block boundaries before it, and the breakpoint's own prefix is written
// (a token is 4 bytes here); the usage says so.
package anthropictest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/coda-acp/coda/engine/provider/internal/fakekit"
)

// A Turn is what the fake model does on one call.
type Turn struct {
	Blocks []Block // the reply's content blocks, in order
	// Stop is the stop_reason; "" is tool_use when a block calls a tool,
	// else end_turn.
	Stop string

	// Hold streams the first block, then waits until the client goes
	// away: a reply that never ends, for cancellation.
	Hold bool

	// Status, when set, answers with this HTTP status and Body instead.
	Status int
	Body   string
}

// A Block is one content block of a Turn.
type Block struct {
	Type string // "thinking", "redacted_thinking", "text" or "tool_use"
	Text string // thinking's or text's text, streamed a word at a time
	// ID, Name and Input are a tool_use's (Input its JSON; "" is {}).
	ID, Name, Input string
}

// Thinking, Text and ToolUse make the blocks of a Turn.
func Thinking(text string) Block { return Block{Type: "thinking", Text: text} }
func Text(text string) Block     { return Block{Type: "text", Text: text} }
func ToolUse(id, name, input string) Block {
	return Block{Type: "tool_use", ID: id, Name: name, Input: input}
}

// Redacted is a redacted_thinking block.
func Redacted() Block { return Block{Type: "redacted_thinking"} }

// A Model is what the fake knows of a model.
type Model struct {
	Budget, Adaptive bool     // the thinking types it takes
	OnByDefault      bool     // it thinks unless told "disabled"
	NoDisable        bool     // "disabled" is refused
	BetweenTools     bool     // it takes "between_tools", and refuses "disabled" for it
	Efforts          []string // output_config.effort levels; nil: refused
	NoForced         bool     // a forced tool_choice is refused whatever the thinking
}

// Models are the models the fake knows, by id, from each one's page of
// https://platform.claude.com/docs/en/models.
var Models = map[string]Model{
	"claude-sonnet-4-5": {Budget: true},
	"claude-haiku-4-5":  {Budget: true},
	"claude-opus-4-6":   {Budget: true, Adaptive: true, Efforts: []string{"low", "medium", "high", "max"}},
	"claude-opus-4-7":   {Adaptive: true, NoDisable: true, Efforts: []string{"low", "medium", "high", "xhigh", "max"}},
	"claude-sonnet-5":   {Adaptive: true, OnByDefault: true, Efforts: []string{"low", "medium", "high", "xhigh", "max"}},
	"claude-sonnet-5-5": {Adaptive: true, OnByDefault: true, NoDisable: true, BetweenTools: true, NoForced: true, Efforts: []string{"low", "medium", "high", "xhigh", "max"}},
	"claude-opus-5-5":   {Adaptive: true, OnByDefault: true, NoDisable: true, NoForced: true, Efforts: []string{"low", "medium", "high", "xhigh", "max"}},
}

// A Request is one call the server received.
type Request struct {
	Header          http.Header
	Body            Body
	Raw             []byte
	fakekit.Verdict // why the rules refused it, if they did
	// Usage is the usage the reply reported (its cache reads and writes).
	Usage Usage
}

// Body is a request's body, as much of it as the fake reads.
type Body struct {
	Model      string            `json:"model"`
	MaxTokens  int               `json:"max_tokens"`
	System     json.RawMessage   `json:"system"`
	Messages   []Message         `json:"messages"`
	Tools      []json.RawMessage `json:"tools"`
	ToolChoice *struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"tool_choice"`
	Thinking *struct {
		Type         string `json:"type"`
		BudgetTokens int    `json:"budget_tokens"`
		Display      string `json:"display"`
	} `json:"thinking"`
	OutputConfig *struct {
		Effort string `json:"effort"`
		Format *struct {
			Type   string          `json:"type"`
			Schema json.RawMessage `json:"schema"`
		} `json:"format"`
	} `json:"output_config"`
	Stream bool `json:"stream"`
}

// A Message is one message of a request.
type Message struct {
	Role    string            `json:"role"`
	Content []json.RawMessage `json:"content"`
}

// A ContentBlock is the part of a request's block the fake reads.
type ContentBlock struct {
	Type         string  `json:"type"`
	ID           string  `json:"id"`
	ToolUseID    string  `json:"tool_use_id"`
	Thinking     *string `json:"thinking"`
	Signature    string  `json:"signature"`
	Data         string  `json:"data"`
	CacheControl *struct {
		Type string `json:"type"`
	} `json:"cache_control"`
}

// Blocks are m's content blocks, decoded.
func (m Message) Blocks() []ContentBlock {
	out := make([]ContentBlock, len(m.Content))
	for i, raw := range m.Content {
		json.Unmarshal(raw, &out[i])
	}
	return out
}

// Usage is what a reply reports of its prompt.
type Usage struct {
	Input, CacheWrite, CacheRead int
}

// A ListedModel is one entry of GET /v1/models.
type ListedModel struct {
	ID             string
	MaxInputTokens int
}

// A Server is a fake Anthropic API; its URL is the base the provider
// appends /v1/messages to.
type Server struct {
	URL string

	// Reply is what the model does on the n-th call (from 0) that the
	// rules let through; nil replies "OK.".
	Reply func(n int, r *Request) Turn
	// Key is the API key every request must carry ("" takes any).
	Key string
	// Models is what the fake knows of the models it serves; nil is the
	// package's Models.
	Models map[string]Model
	// Listed is what GET /v1/models lists.
	Listed []ListedModel
	// NoStrict and NoJSONOutputs make the server one without strict tool
	// use or JSON outputs (a model or a gateway that predates structured
	// outputs): a request that uses them is refused, naming the field.
	NoStrict, NoJSONOutputs bool
	// NoFiles makes the server one that refuses the Files API's beta
	// header.
	NoFiles bool

	fakekit.Base[Request]
	files    fakekit.Files
	received fakekit.Bytes

	mu     sync.Mutex
	signed map[string]string // signature → model+"\x00"+thinking text
	cached map[[32]byte]bool // prompt prefixes written to the cache
	// wrote are the tool_use ids of the replies this server wrote, each
	// with whether its reply began with thinking.
	wrote map[string]bool
}

// NewServer starts a fake; Close stops it.
func NewServer() *Server {
	s := &Server{signed: map[string]string{}, cached: map[[32]byte]bool{}, wrote: map[string]bool{}}
	s.URL = s.Start(s.serve)
	return s
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.received.Count(r)
	defer io.Copy(io.Discard, r.Body) // what a refusal left unread, before the answer ends
	if s.NoFiles && strings.Contains(r.Header.Get("Anthropic-Beta"), filesBeta) {
		writeError(w, 400, "invalid_request_error", fmt.Sprintf("Unexpected value(s) `%s` for the `anthropic-beta` header. Please consult our documentation at docs.anthropic.com or try again without the header.", filesBeta))
		return
	}
	if s.Key != "" && r.Header.Get("X-Api-Key") != s.Key {
		writeError(w, 401, "authentication_error", "invalid x-api-key")
		return
	}
	if r.Header.Get("Anthropic-Version") == "" {
		writeError(w, 400, "invalid_request_error", "anthropic-version: header is required")
		return
	}
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/v1/models":
		s.list(w)
	case r.URL.Path == "/v1/files" || strings.HasPrefix(r.URL.Path, "/v1/files/"):
		s.serveFiles(w, r)
	case r.URL.Path == "/v1/messages":
		s.messages(w, r)
	default:
		writeError(w, 404, "not_found_error", "Not Found")
	}
}

// messages serves POST /v1/messages: the request held to the rules, then
// the scripted turn streamed.
func (s *Server) messages(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	req := &Request{Header: r.Header.Clone(), Raw: raw}
	s.Log.Add(req)
	if ref := fakekit.Judge(&s.Log, req, rules, s.call(req)); ref != nil {
		typ := ref.Type
		if typ == "" {
			typ = "invalid_request_error"
		}
		writeError(w, ref.Status, typ, ref.Msg)
		return
	}
	usage := s.cache(&req.Body)
	s.Log.Locked(func() { req.Usage = usage })
	n := s.Log.Serve()
	t := Turn{Blocks: []Block{Text("OK.")}}
	if s.Reply != nil {
		t = s.Reply(n, req)
	}
	if t.Status != 0 {
		fakekit.WriteRaw(w, t.Status, "application/json", t.Body)
		return
	}
	s.stream(w, r, req, t)
}

func writeError(w http.ResponseWriter, status int, typ, msg string) {
	fakekit.AnthropicError(w, status, typ, msg)
}

func (s *Server) list(w http.ResponseWriter) {
	data := []map[string]any{}
	for _, m := range s.Listed {
		e := map[string]any{"id": m.ID, "type": "model", "display_name": m.ID, "created_at": "2026-09-22T00:00:00Z"}
		if m.MaxInputTokens > 0 {
			e["max_input_tokens"] = m.MaxInputTokens
		}
		data = append(data, e)
	}
	fakekit.WriteJSON(w, 200, "application/json", map[string]any{"data": data, "has_more": false})
}
