// Package anthropictest is a fake Anthropic messages API for tests:
// POST /v1/messages streamed as the real one streams
// (https://docs.anthropic.com/en/docs/build-with-claude/streaming), and
// GET /v1/models, holding each request to the rules Anthropic documents
// and answering a broken one with the API's error body ({"type": "error",
// "error": {"type": "invalid_request_error", "message"}}). Tests script
// what the model does (Turn); the fake signs the thinking it sends,
// caches prompts as the API does, and records what it was sent.
//
// The rules it enforces, each with its source:
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
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
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
	Header http.Header
	Body   Body
	Raw    []byte
	// Refused is the error message the server answered with, when a rule
	// refused the request; "" when it was served.
	Refused string
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

	srv       *httptest.Server
	mu        sync.Mutex
	requests  []*Request
	served    int
	cancelled int
	signed    map[string]string // signature → model+"\x00"+thinking text
	cached    map[[32]byte]bool // prompt prefixes written to the cache
	// wrote are the tool_use ids of the replies this server wrote, each
	// with whether its reply began with thinking.
	wrote map[string]bool

	files    map[string]File // uploaded and not deleted, by id
	uploads  int
	deletes  int
	received int64 // bytes of request bodies, uploads included
}

// NewServer starts a fake; Close stops it.
func NewServer() *Server {
	s := &Server{signed: map[string]string{}, cached: map[[32]byte]bool{}, wrote: map[string]bool{}, files: map[string]File{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	return s
}

// Close shuts the server down.
func (s *Server) Close() { s.srv.Close() }

// Client is an HTTP client for the server.
func (s *Server) Client() *http.Client { return s.srv.Client() }

// Requests are the calls received so far, refused ones included.
func (s *Server) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// Refusals are the messages of the requests the rules refused.
func (s *Server) Refusals() []string {
	var out []string
	for _, r := range s.Requests() {
		if r.Refused != "" {
			out = append(out, r.Refused)
		}
	}
	return out
}

// Cancelled counts the replies whose client went away before they ended.
func (s *Server) Cancelled() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cancelled
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	r.Body = &counted{r.Body, s}
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
	if r.Method == http.MethodGet && r.URL.Path == "/v1/models" {
		s.list(w)
		return
	}
	if r.URL.Path == "/v1/files" || strings.HasPrefix(r.URL.Path, "/v1/files/") {
		s.serveFiles(w, r)
		return
	}
	if r.URL.Path != "/v1/messages" {
		writeError(w, 404, "not_found_error", "Not Found")
		return
	}
	raw, _ := io.ReadAll(r.Body)
	req := &Request{Header: r.Header.Clone(), Raw: raw}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	s.mu.Unlock()
	if err := json.Unmarshal(raw, &req.Body); err != nil {
		s.refuse(w, req, 400, "invalid_request_error", "invalid JSON: "+err.Error())
		return
	}
	if extra := extraField(raw); extra != "" {
		s.refuse(w, req, 400, "invalid_request_error", extra+": Extra inputs are not permitted")
		return
	}
	models := s.Models
	if models == nil {
		models = Models
	}
	model, ok := models[req.Body.Model]
	if !ok {
		s.refuse(w, req, 404, "not_found_error", "model: "+req.Body.Model)
		return
	}
	if msg := s.check(&req.Body, model); msg != "" {
		s.refuse(w, req, 400, "invalid_request_error", msg)
		return
	}
	if status, typ, msg := s.checkImages(req); msg != "" {
		s.refuse(w, req, status, typ, msg)
		return
	}
	usage := s.cache(&req.Body)
	s.mu.Lock()
	req.Usage = usage
	n := s.served
	s.served++
	s.mu.Unlock()
	t := Turn{Blocks: []Block{Text("OK.")}}
	if s.Reply != nil {
		t = s.Reply(n, req)
	}
	if t.Status != 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(t.Status)
		io.WriteString(w, t.Body)
		return
	}
	s.stream(w, r, req, t)
}

// messagesFields are the top-level fields of the Messages API's request
// (docs.anthropic.com/en/api/messages): any other is refused.
var messagesFields = []string{"model", "messages", "max_tokens", "system", "tools", "tool_choice", "thinking", "output_config",
	"stream", "temperature", "top_p", "top_k", "stop_sequences", "metadata", "service_tier", "container", "mcp_servers", "context_management"}

// extraField is a top-level field of raw the API does not take, or "".
func extraField(raw []byte) string {
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil {
		return ""
	}
	for k := range fields {
		if !slices.Contains(messagesFields, k) {
			return k
		}
	}
	return ""
}

func (s *Server) refuse(w http.ResponseWriter, req *Request, status int, typ, msg string) {
	s.mu.Lock()
	req.Refused = msg
	s.mu.Unlock()
	writeError(w, status, typ, msg)
}

func writeError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}, "request_id": "req_fake"})
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
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"data": data, "has_more": false})
}

// check returns why the API would refuse b, or "".
func (s *Server) check(b *Body, model Model) string {
	var strict []json.RawMessage // the request's strict schemas, held to the limits together
	thinkingOn := model.OnByDefault
	if th := b.Thinking; th != nil {
		switch th.Type {
		case "enabled":
			if !model.Budget {
				return `"thinking.type.enabled" is not supported for this model. Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.`
			}
			if th.BudgetTokens < 1024 {
				return "thinking.budget_tokens: Input should be greater than or equal to 1024"
			}
			if th.BudgetTokens >= b.MaxTokens {
				return "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size"
			}
			thinkingOn = true
		case "adaptive":
			if !model.Adaptive {
				return `"thinking.type.adaptive" is not supported for this model.`
			}
			if th.Display != "" && th.Display != "summarized" && th.Display != "omitted" {
				return "thinking.display: Input should be 'summarized' or 'omitted'"
			}
			thinkingOn = true
		case "disabled":
			if model.BetweenTools {
				return `"thinking.type.disabled" is not supported for this model. Use "thinking.type.between_tools" to turn off up-front thinking.`
			}
			if model.NoDisable {
				return `"thinking.type.disabled" is not supported for this model.`
			}
			thinkingOn = false
		case "between_tools":
			if !model.BetweenTools {
				return `"thinking.type.between_tools" is not supported for this model.`
			}
			if oc := b.OutputConfig; oc != nil && (oc.Effort == "xhigh" || oc.Effort == "max") {
				return `"thinking.type.between_tools" is not supported at effort ` + oc.Effort + `: use "thinking.type.adaptive".`
			}
			thinkingOn = true // its progress notes are thinking blocks
		default:
			return "thinking.type: Input tag '" + th.Type + "' found using 'type' does not match any of the expected tags: 'adaptive', 'between_tools', 'disabled', 'enabled'"
		}
	}
	if oc := b.OutputConfig; oc != nil {
		if oc.Effort != "" && !slices.Contains(model.Efforts, oc.Effort) {
			if model.Efforts == nil {
				return "output_config.effort: This model does not support the effort parameter."
			}
			return fmt.Sprintf("output_config.effort: Input should be %s", strings.Join(model.Efforts, ", "))
		}
		if oc.Format != nil && (oc.Format.Type != "json_schema" || len(oc.Format.Schema) == 0) {
			return "output_config.format: Input tag does not match the expected tag 'json_schema'"
		}
		if oc.Format != nil && !s.NoJSONOutputs {
			if msg := schemaProblem(oc.Format.Schema); msg != "" {
				return "output_config.format.schema: " + msg
			}
			strict = append(strict, oc.Format.Schema)
		}
	}
	if s.NoJSONOutputs && b.OutputConfig != nil && b.OutputConfig.Format != nil {
		return "output_config.format: Extra inputs are not permitted"
	}
	if s.NoStrict {
		for i, t := range b.Tools {
			var tl struct {
				Strict bool `json:"strict"`
			}
			json.Unmarshal(t, &tl)
			if tl.Strict {
				return fmt.Sprintf("tools.%d.custom.strict: Extra inputs are not permitted", i)
			}
		}
	}
	if tc := b.ToolChoice; tc != nil && (tc.Type == "tool" || tc.Type == "any") {
		switch {
		case model.NoForced:
			return fmt.Sprintf("tool_choice: type '%s' is not supported for this model; use 'auto' or 'none'.", tc.Type)
		case thinkingOn:
			return "Thinking may not be enabled when tool_choice forces tool use."
		}
	}
	marks := 0
	mark := func(typ string, marked bool) string {
		if !marked {
			return ""
		}
		marks++
		if typ != "ephemeral" {
			return "cache_control.type: Input should be 'ephemeral'"
		}
		return ""
	}
	for i, t := range b.Tools {
		var tl struct {
			Strict       bool            `json:"strict"`
			InputSchema  json.RawMessage `json:"input_schema"`
			CacheControl *struct {
				Type string `json:"type"`
			} `json:"cache_control"`
		}
		json.Unmarshal(t, &tl)
		if tl.CacheControl != nil {
			if msg := mark(tl.CacheControl.Type, true); msg != "" {
				return msg
			}
		}
		if tl.Strict {
			if msg := schemaProblem(tl.InputSchema); msg != "" {
				return fmt.Sprintf("tools.%d.custom.input_schema: %s", i, msg)
			}
			strict = append(strict, tl.InputSchema)
		}
	}
	if len(b.System) > 0 && b.System[0] == '[' {
		var sys []ContentBlock
		json.Unmarshal(b.System, &sys)
		for _, blk := range sys {
			if blk.CacheControl != nil {
				if msg := mark(blk.CacheControl.Type, true); msg != "" {
					return msg
				}
			}
		}
	}
	var calls map[string]bool
	for i, m := range b.Messages {
		if want := []string{"user", "assistant"}[i%2]; m.Role != want {
			return fmt.Sprintf("messages: roles must alternate between \"user\" and \"assistant\", starting with \"user\" (messages.%d is %q)", i, m.Role)
		}
		if len(m.Content) == 0 {
			return fmt.Sprintf("messages.%d: all messages must have non-empty content", i)
		}
		next := map[string]bool{}
		for j, blk := range m.Blocks() {
			if blk.CacheControl != nil {
				if blk.Type == "thinking" || blk.Type == "redacted_thinking" {
					return fmt.Sprintf("messages.%d.content.%d.%s.cache_control: Thinking blocks cannot be cached directly", i, j, blk.Type)
				}
				if msg := mark(blk.CacheControl.Type, true); msg != "" {
					return msg
				}
			}
			switch blk.Type {
			case "redacted_thinking":
				if blk.Data == "" {
					return fmt.Sprintf("messages.%d.content.%d.redacted_thinking.data: Field required", i, j)
				}
			case "thinking":
				s.mu.Lock()
				by, ok := s.signed[blk.Signature]
				s.mu.Unlock()
				if blk.Thinking == nil || !ok || by != b.Model+"\x00"+*blk.Thinking {
					return fmt.Sprintf("messages.%d.content.%d: Invalid `signature` in `thinking` block", i, j)
				}
			case "tool_use":
				next[blk.ID] = true
			case "tool_result":
				if !calls[blk.ToolUseID] {
					return fmt.Sprintf("messages.%d.content.%d: unexpected `tool_use_id` found in `tool_result` blocks: %s. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.", i, j, blk.ToolUseID)
				}
			}
		}
		calls = next
	}
	if msg := complexity(strict); msg != "" {
		return msg
	}
	if marks > 4 {
		return fmt.Sprintf("A maximum of 4 blocks with cache_control may be provided. Found %d.", marks)
	}
	if thinkingOn {
		return s.thinkingFirst(b.Messages)
	}
	return ""
}

// thinkingFirst is why the API refuses msgs with thinking on, or "": a
// tool loop's last assistant message must start with its thinking.
func (s *Server) thinkingFirst(msgs []Message) string {
	n := len(msgs)
	if n < 2 || !slices.ContainsFunc(msgs[n-1].Blocks(), func(b ContentBlock) bool { return b.Type == "tool_result" }) {
		return ""
	}
	blocks := msgs[n-2].Blocks()
	if len(blocks) == 0 || blocks[0].Type == "thinking" || blocks[0].Type == "redacted_thinking" {
		return ""
	}
	s.mu.Lock()
	exempt := false
	for _, b := range blocks {
		if b.Type != "tool_use" {
			continue
		}
		thought, wrote := s.wrote[b.ID]
		if !wrote || thought {
			exempt = false
			break
		}
		exempt = true
	}
	s.mu.Unlock()
	if exempt {
		return ""
	}
	return fmt.Sprintf("messages.%d.content.0.type: Expected `thinking` or `redacted_thinking`, but found `%s`. When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable `thinking`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking", n-2, blocks[0].Type)
}

// The JSON Schema subset of structured outputs (see the package's doc).
var (
	schemaFormats = []string{"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"}
	// schemaRefused are the keywords the subset names as not supported.
	schemaRefused = []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minLength", "maxLength",
		"maxItems", "uniqueItems", "contains", "minContains", "maxContains", "prefixItems", "minProperties", "maxProperties",
		"patternProperties", "propertyNames", "unevaluatedProperties", "unevaluatedItems", "dependentRequired", "dependentSchemas",
		"if", "then", "else", "not", "oneOf"}
)

// The complexity limits of structured outputs, over every strict tool's
// input_schema and the JSON output format of one request together (the
// structured-outputs page's limits; the API's 400s: "Schemas contains too
// many optional parameters (28), which would make grammar compilation
// inefficient. Reduce the number of optional parameters in your tool
// schemas (limit: 24).", "Schemas contains too many parameters with union
// types (24 parameters with type arrays or anyOf) ... (limit: 16
// parameters with unions)"): 20 strict tools, 24 optional properties, 16
// schemas with a union.
const (
	maxStrictTools = 20
	maxOptional    = 24
	maxUnions      = 16
)

// complexity says why the API refuses a request's strict schemas together,
// or "".
func complexity(schemas []json.RawMessage) string {
	if len(schemas) > maxStrictTools {
		return fmt.Sprintf("Too many strict tools (%d); the limit is %d.", len(schemas), maxStrictTools)
	}
	optional, unions := 0, 0
	var walk func(v any)
	walk = func(v any) { // a schema: its subschemas, not its values
		x, ok := v.(map[string]any)
		if !ok {
			return
		}
		props, _ := x["properties"].(map[string]any)
		req, _ := x["required"].([]any)
		for _, k := range sortedKeys(props) {
			if !slices.Contains(req, any(k)) {
				optional++
			}
			walk(props[k])
		}
		if t, ok := x["type"].([]any); ok && len(t) > 1 {
			unions++
		}
		if _, ok := x["anyOf"]; ok {
			unions++
		}
		for _, k := range []string{"anyOf", "allOf"} {
			list, _ := x[k].([]any)
			for _, b := range list {
				walk(b)
			}
		}
		walk(x["items"])
		for _, k := range []string{"$defs", "definitions"} {
			defs, _ := x[k].(map[string]any)
			for _, name := range sortedKeys(defs) {
				walk(defs[name])
			}
		}
	}
	for _, raw := range schemas {
		var v any
		json.Unmarshal(raw, &v)
		walk(v)
	}
	switch {
	case optional > maxOptional:
		return fmt.Sprintf("Schemas contains too many optional parameters (%d), which would make grammar compilation inefficient. Reduce the number of optional parameters in your tool schemas (limit: %d).", optional, maxOptional)
	case unions > maxUnions:
		return fmt.Sprintf("Schemas contains too many parameters with union types (%d parameters with type arrays or anyOf), which would make grammar compilation inefficient. Reduce the number of parameters with union types (limit: %d parameters with unions).", unions, maxUnions)
	}
	return ""
}

// SchemaProblem says why the API refuses raw as the one strict schema of
// a request (a strict tool's input_schema, or the JSON output format's), or
// "": the subset, then the complexity limits.
func SchemaProblem(raw json.RawMessage) string {
	if msg := schemaProblem(raw); msg != "" {
		return msg
	}
	return complexity([]json.RawMessage{raw})
}

// schemaProblem says why the API refuses raw as a strict or JSON output
// schema, or "".
func schemaProblem(raw json.RawMessage) string {
	var root any
	if err := json.Unmarshal(raw, &root); err != nil {
		return "JSON schema is invalid: " + err.Error()
	}
	c := schemaCheck{root: root, refs: map[string][]string{}}
	if msg := c.node("", "", root); msg != "" {
		return msg
	}
	if cycle := c.cycle(); cycle != "" {
		return "Too many recursive definitions in schema: " + cycle + " refers back to itself"
	}
	return ""
}

// A schemaCheck walks one schema, noting which definitions refer to
// which.
type schemaCheck struct {
	root any
	refs map[string][]string // "$defs/x" (or "" for the root) → the definitions it refers to
}

func (c *schemaCheck) node(path, def string, v any) string {
	m, ok := v.(map[string]any)
	if !ok {
		if _, isBool := v.(bool); isBool {
			return ""
		}
		return fmt.Sprintf("%s: a schema must be an object", at(path))
	}
	for _, k := range schemaRefused {
		if _, has := m[k]; has {
			return fmt.Sprintf("%s: '%s' is not supported", at(path), k)
		}
	}
	if n, has := m["minItems"]; has && n != 0.0 && n != 1.0 {
		return fmt.Sprintf("%s: 'minItems' values other than 0 or 1 are not supported", at(path))
	}
	_, props := m["properties"]
	if props || m["type"] == "object" || isList(m["type"]) && slices.Contains(m["type"].([]any), any("object")) {
		if m["additionalProperties"] != false {
			return fmt.Sprintf("%s: For 'object' type, 'additionalProperties' must be explicitly set to false", at(path))
		}
	}
	if f, has := m["format"]; has {
		if name, _ := f.(string); !slices.Contains(schemaFormats, name) {
			return fmt.Sprintf("%s: string format '%v' is not supported", at(path), f)
		}
	}
	if p, has := m["pattern"]; has {
		re, _ := p.(string)
		for _, bad := range []string{`\1`, `\2`, `(?=`, `(?!`, `(?<=`, `(?<!`, `\b`, `\B`} {
			if strings.Contains(re, bad) {
				return fmt.Sprintf("%s: the pattern's %s is not supported", at(path), bad)
			}
		}
	}
	if e, has := m["enum"].([]any); has {
		for _, x := range e {
			switch x.(type) {
			case map[string]any, []any:
				return fmt.Sprintf("%s: enum values must be strings, numbers, booleans or null", at(path))
			}
		}
	}
	if ref, has := m["$ref"].(string); has {
		name, ok := localDef(ref)
		if !ok || c.def(name) == nil {
			return fmt.Sprintf("%s: $ref %q is not supported: only references to the schema's own $defs or definitions are", at(path), ref)
		}
		c.refs[def] = append(c.refs[def], name)
	}
	for _, k := range []string{"anyOf", "allOf"} {
		list, _ := m[k].([]any)
		for i, sub := range list {
			if sm, ok := sub.(map[string]any); ok && k == "allOf" && sm["$ref"] != nil {
				return fmt.Sprintf("%s: allOf with $ref is not supported", at(path))
			}
			if msg := c.node(fmt.Sprintf("%s.%s.%d", path, k, i), def, sub); msg != "" {
				return msg
			}
		}
	}
	if pm, ok := m["properties"].(map[string]any); ok {
		for _, name := range sortedKeys(pm) {
			if msg := c.node(path+".properties."+name, def, pm[name]); msg != "" {
				return msg
			}
		}
	}
	if items, has := m["items"]; has {
		if msg := c.node(path+".items", def, items); msg != "" {
			return msg
		}
	}
	if path == "" {
		for _, k := range []string{"$defs", "definitions"} {
			defs, _ := m[k].(map[string]any)
			for _, name := range sortedKeys(defs) {
				if msg := c.node(k+"."+name, k+"/"+name, defs[name]); msg != "" {
					return msg
				}
			}
		}
	}
	return ""
}

// def is the root's definition name ("$defs/x"), or nil.
func (c *schemaCheck) def(name string) any {
	k, n, _ := strings.Cut(name, "/")
	root, _ := c.root.(map[string]any)
	defs, _ := root[k].(map[string]any)
	return defs[n]
}

// cycle is a definition that refers back to itself, or "".
func (c *schemaCheck) cycle() string {
	state := map[string]int{}
	var visit func(n string) string
	visit = func(n string) string {
		switch state[n] {
		case 1:
			return n
		case 2:
			return ""
		}
		state[n] = 1
		for _, next := range c.refs[n] {
			if found := visit(next); found != "" {
				return found
			}
		}
		state[n] = 2
		return ""
	}
	for _, n := range sortedKeys(c.refs) {
		if found := visit(n); found != "" {
			return found
		}
	}
	return ""
}

// localDef is the definition a $ref names ("$defs/x"), when it is one of
// the schema's own.
func localDef(ref string) (string, bool) {
	for _, k := range []string{"$defs", "definitions"} {
		if name, ok := strings.CutPrefix(ref, "#/"+k+"/"); ok && name != "" && !strings.Contains(name, "/") {
			return k + "/" + name, true
		}
	}
	return "", false
}

func at(path string) string {
	if path == "" {
		return "the schema's top level"
	}
	return strings.TrimPrefix(path, ".")
}

func isList(v any) bool { _, ok := v.([]any); return ok }

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// cache is the usage of b's prompt, as the API counts it.
func (s *Server) cache(b *Body) Usage {
	type boundary struct {
		hash   [32]byte
		tokens int
		marked bool
	}
	var prefix []byte
	var bounds []boundary
	add := func(raw json.RawMessage) {
		var blk map[string]any
		json.Unmarshal(raw, &blk)
		marked := blk["cache_control"] != nil
		delete(blk, "cache_control")
		c, _ := json.Marshal(blk)
		prefix = append(prefix, c...)
		bounds = append(bounds, boundary{sha256.Sum256(prefix), len(prefix) / 4, marked})
	}
	for _, t := range b.Tools {
		add(t)
	}
	if len(b.System) > 0 && b.System[0] == '[' {
		var sys []json.RawMessage
		json.Unmarshal(b.System, &sys)
		for _, blk := range sys {
			add(blk)
		}
	} else {
		prefix = append(prefix, b.System...)
	}
	for _, m := range b.Messages {
		prefix = append(prefix, m.Role...)
		for _, blk := range m.Content {
			add(blk)
		}
	}
	total := len(prefix) / 4
	read, written := 0, 0
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, bd := range bounds {
		if !bd.marked {
			continue
		}
		for j := i; j >= 0 && j >= i-20; j-- {
			if s.cached[bounds[j].hash] {
				read = max(read, bounds[j].tokens)
				break
			}
		}
	}
	for _, bd := range bounds {
		if bd.marked && !s.cached[bd.hash] {
			s.cached[bd.hash] = true
			written = max(written, bd.tokens)
		}
	}
	write := max(0, written-read)
	return Usage{Input: total - read - write, CacheWrite: write, CacheRead: read}
}

// sign gives a signature for a thinking block's text, from model.
func (s *Server) sign(model, text string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := sha256.Sum256(fmt.Appendf(nil, "%s\x00%s\x00%d", model, text, len(s.signed)))
	sig := base64.StdEncoding.EncodeToString(h[:])
	s.signed[sig] = model + "\x00" + text
	return sig
}

// stream writes t as the API streams a reply.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, req *Request, t Turn) {
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	event := func(typ string, v map[string]any) {
		v["type"] = typ
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, b)
		w.(http.Flusher).Flush()
	}
	u := req.Usage
	event("message_start", map[string]any{"message": map[string]any{
		"id": "msg_fake", "type": "message", "role": "assistant", "content": []any{}, "model": req.Body.Model, "stop_reason": nil,
		"usage": map[string]any{"input_tokens": u.Input, "cache_creation_input_tokens": u.CacheWrite, "cache_read_input_tokens": u.CacheRead, "output_tokens": 1},
	}})
	stop := t.Stop
	thought := len(t.Blocks) > 0 && (t.Blocks[0].Type == "thinking" || t.Blocks[0].Type == "redacted_thinking")
	s.mu.Lock()
	for _, blk := range t.Blocks {
		if blk.Type == "tool_use" {
			s.wrote[blk.ID] = thought
		}
	}
	s.mu.Unlock()
	for i, blk := range t.Blocks {
		delta := func(d map[string]any) { event("content_block_delta", map[string]any{"index": i, "delta": d}) }
		switch blk.Type {
		case "thinking":
			event("content_block_start", map[string]any{"index": i, "content_block": map[string]any{"type": "thinking", "thinking": "", "signature": ""}})
			for _, piece := range words(blk.Text) {
				delta(map[string]any{"type": "thinking_delta", "thinking": piece})
			}
			delta(map[string]any{"type": "signature_delta", "signature": s.sign(req.Body.Model, blk.Text)})
		case "redacted_thinking":
			event("content_block_start", map[string]any{"index": i, "content_block": map[string]any{"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"}})
		case "text":
			event("content_block_start", map[string]any{"index": i, "content_block": map[string]any{"type": "text", "text": ""}})
			for _, piece := range words(blk.Text) {
				delta(map[string]any{"type": "text_delta", "text": piece})
			}
		case "tool_use":
			event("content_block_start", map[string]any{"index": i, "content_block": map[string]any{"type": "tool_use", "id": blk.ID, "name": blk.Name, "input": map[string]any{}}})
			in := blk.Input
			if in == "" {
				in = "{}"
			}
			// The input in two fragments, as the API cuts it anywhere.
			half := len(in) / 2
			delta(map[string]any{"type": "input_json_delta", "partial_json": in[:half]})
			delta(map[string]any{"type": "input_json_delta", "partial_json": in[half:]})
			if stop == "" {
				stop = "tool_use"
			}
		}
		event("content_block_stop", map[string]any{"index": i})
		if t.Hold {
			<-r.Context().Done()
			s.mu.Lock()
			s.cancelled++
			s.mu.Unlock()
			return
		}
	}
	if stop == "" {
		stop = "end_turn"
	}
	event("message_delta", map[string]any{"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 42}})
	event("message_stop", map[string]any{})
}

// words cuts text into pieces of a word each, spaces kept.
func words(text string) []string {
	var out []string
	for text != "" {
		i := strings.IndexByte(text[1:], ' ')
		if i < 0 {
			out = append(out, text)
			break
		}
		out = append(out, text[:i+1])
		text = text[i+1:]
	}
	return out
}
