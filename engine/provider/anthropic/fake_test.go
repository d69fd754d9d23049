package anthropic

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
	"testing"
)

// fakeAPI is an Anthropic messages API that holds each request to what
// Anthropic's docs say one must be, and refuses one that is not with a 400
// shaped as the API's ({"type": "error", "error": {"type":
// "invalid_request_error", "message"}}):
//
//   - x-api-key and anthropic-version are sent, to /v1/messages;
//   - the roles alternate, user first, and a tool_result answers a
//     tool_use of the assistant message before it;
//   - thinking: {"type": "enabled", "budget_tokens"} only on models that
//     take a budget (Claude Opus 4.7 and later refuse it), at least 1024
//     and less than max_tokens; {"type": "adaptive"} only on Claude 4.6 and
//     later; {"type": "disabled"} not on models that cannot stop thinking;
//     output_config.effort only at levels the model takes
//     (https://docs.anthropic.com/en/docs/build-with-claude/adaptive-thinking,
//     /effort, each model's what's-new page);
//   - tool_choice {"type": "tool"} or "any" is refused with thinking on,
//     explicit or the model's default ("Thinking may not be enabled when
//     tool_choice forces tool use"), and by models that never take it;
//   - a thinking block goes back with the signature this server gave it,
//     for this model, with its text unchanged;
//   - at most 4 cache_control blocks, of type ephemeral, none on a
//     thinking block (https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching);
//   - a strict tool's schema closes its objects (additionalProperties
//     false), and output_config.format is a json_schema
//     (https://docs.anthropic.com/en/docs/build-with-claude/structured-outputs).
//
// It caches as the API does, closely enough to count: a breakpoint's
// prefix (tools, system, messages up to the marked block) is written to
// the cache the first time it is seen and read from it after, and the
// usage says so (a token is 4 bytes here).
type fakeAPI struct {
	*httptest.Server
	key string

	mu       sync.Mutex
	signed   map[string]string // signature → model+"\x00"+thinking text
	cached   map[[32]byte]int  // prefix hash → its tokens
	bodies   []fakeRequest
	replies  []fakeReply
	refusals []string
}

// A fakeClaude is what the fake knows of a model.
type fakeClaude struct {
	budget, adaptive bool     // the thinking types it takes
	onByDefault      bool     // it thinks unless told "disabled"
	noDisable        bool     // "disabled" is refused
	efforts          []string // output_config.effort levels; nil: refused
	noForced         bool     // a forced tool_choice is refused whatever the thinking
}

var fakeClaudes = map[string]fakeClaude{
	"claude-sonnet-4-5": {budget: true},
	"claude-haiku-4-5":  {budget: true},
	"claude-opus-4-6":   {budget: true, adaptive: true, efforts: []string{"low", "medium", "high", "max"}},
	"claude-opus-4-7":   {adaptive: true, noDisable: true, efforts: []string{"low", "medium", "high", "xhigh", "max"}},
	"claude-sonnet-5":   {adaptive: true, onByDefault: true, efforts: []string{"low", "medium", "high", "xhigh", "max"}},
	"claude-sonnet-5-5": {adaptive: true, onByDefault: true, noForced: true, efforts: []string{"low", "medium", "high", "xhigh", "max"}},
	"claude-opus-5-5":   {adaptive: true, onByDefault: true, noDisable: true, noForced: true, efforts: []string{"low", "medium", "high", "xhigh", "max"}},
}

// A fakeReply writes the SSE body for one request; sign gives a
// signature for a thinking block's text, from the model the request named.
type fakeReply func(req *fakeRequest, sign func(thinking string) string, usage string) string

type fakeRequest struct {
	Model      string            `json:"model"`
	MaxTokens  int               `json:"max_tokens"`
	System     json.RawMessage   `json:"system"`
	Messages   []fakeMessage     `json:"messages"`
	Tools      []json.RawMessage `json:"tools"`
	ToolChoice *struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"tool_choice"`
	Thinking     *fakeThinking `json:"thinking"`
	OutputConfig *struct {
		Effort string `json:"effort"`
		Format *struct {
			Type   string          `json:"type"`
			Schema json.RawMessage `json:"schema"`
		} `json:"format"`
	} `json:"output_config"`
	Stream bool `json:"stream"`
}

type fakeThinking struct {
	Type         string `json:"type"`
	BudgetTokens int    `json:"budget_tokens"`
	Display      string `json:"display"`
}

type fakeMessage struct {
	Role    string            `json:"role"`
	Content []json.RawMessage `json:"content"`
}

// fakeBlock is the part of a block the fake reads.
type fakeBlock struct {
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

func newFakeAPI(t *testing.T, replies ...fakeReply) *fakeAPI {
	t.Helper()
	f := &fakeAPI{key: testKey, signed: map[string]string{}, cached: map[[32]byte]int{}, replies: replies}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeAPI) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	refuse := func(code int, typ, msg string) {
		f.mu.Lock()
		f.refusals = append(f.refusals, msg)
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}, "request_id": "req_fake"})
		w.Write(b)
	}
	switch {
	case r.Header.Get("X-Api-Key") != f.key:
		refuse(401, "authentication_error", "invalid x-api-key")
		return
	case r.Header.Get("Anthropic-Version") == "":
		refuse(400, "invalid_request_error", "anthropic-version: header is required")
		return
	case r.URL.Path != "/v1/messages":
		refuse(404, "not_found_error", "Not Found")
		return
	}
	var req fakeRequest
	if err := json.Unmarshal(raw, &req); err != nil {
		refuse(400, "invalid_request_error", "invalid JSON: "+err.Error())
		return
	}
	model, ok := fakeClaudes[req.Model]
	if !ok {
		refuse(404, "not_found_error", "model: "+req.Model)
		return
	}
	f.mu.Lock()
	f.bodies = append(f.bodies, req)
	f.mu.Unlock()
	if msg := f.check(&req, model); msg != "" {
		refuse(400, "invalid_request_error", msg)
		return
	}
	usage := f.cache(&req)
	f.mu.Lock()
	reply := f.replies[0]
	if len(f.replies) > 1 {
		f.replies = f.replies[1:]
	}
	f.mu.Unlock()
	sign := func(text string) string {
		f.mu.Lock()
		defer f.mu.Unlock()
		h := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%s\x00%d", req.Model, text, len(f.signed))))
		s := base64.StdEncoding.EncodeToString(h[:])
		f.signed[s] = req.Model + "\x00" + text
		return s
	}
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	io.WriteString(w, reply(&req, sign, usage))
}

// check returns why the API would refuse req, or "".
func (f *fakeAPI) check(req *fakeRequest, model fakeClaude) string {
	thinkingOn := model.onByDefault
	if th := req.Thinking; th != nil {
		switch th.Type {
		case "enabled":
			if !model.budget {
				return `"thinking.type.enabled" is not supported for this model. Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.`
			}
			if th.BudgetTokens < 1024 {
				return "thinking.budget_tokens: Input should be greater than or equal to 1024"
			}
			if th.BudgetTokens >= req.MaxTokens {
				return "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size"
			}
			thinkingOn = true
		case "adaptive":
			if !model.adaptive {
				return `"thinking.type.adaptive" is not supported for this model.`
			}
			if th.Display != "" && th.Display != "summarized" && th.Display != "omitted" {
				return "thinking.display: Input should be 'summarized' or 'omitted'"
			}
			thinkingOn = true
		case "disabled":
			if model.noDisable {
				return `"thinking.type.disabled" is not supported for this model.`
			}
			thinkingOn = false
		default:
			return "thinking.type: Input tag '" + th.Type + "' found using 'type' does not match any of the expected tags: 'adaptive', 'disabled', 'enabled'"
		}
	}
	if oc := req.OutputConfig; oc != nil {
		if oc.Effort != "" && !slices.Contains(model.efforts, oc.Effort) {
			if model.efforts == nil {
				return "output_config.effort: This model does not support the effort parameter."
			}
			return fmt.Sprintf("output_config.effort: Input should be %s", strings.Join(model.efforts, ", "))
		}
		if oc.Format != nil && (oc.Format.Type != "json_schema" || len(oc.Format.Schema) == 0) {
			return "output_config.format: Input tag does not match the expected tag 'json_schema'"
		}
	}
	if tc := req.ToolChoice; tc != nil && (tc.Type == "tool" || tc.Type == "any") {
		switch {
		case model.noForced:
			return fmt.Sprintf("tool_choice: type '%s' is not supported for this model; use 'auto' or 'none'.", tc.Type)
		case thinkingOn:
			return "Thinking may not be enabled when tool_choice forces tool use."
		}
	}
	marks := 0
	mark := func(cc *struct {
		Type string `json:"type"`
	}) string {
		if cc == nil {
			return ""
		}
		marks++
		if cc.Type != "ephemeral" {
			return "cache_control.type: Input should be 'ephemeral'"
		}
		return ""
	}
	for i, t := range req.Tools {
		var tl struct {
			Strict       bool            `json:"strict"`
			InputSchema  json.RawMessage `json:"input_schema"`
			CacheControl *struct {
				Type string `json:"type"`
			} `json:"cache_control"`
		}
		json.Unmarshal(t, &tl)
		if msg := mark(tl.CacheControl); msg != "" {
			return msg
		}
		if tl.Strict {
			var s struct {
				AdditionalProperties *bool `json:"additionalProperties"`
			}
			json.Unmarshal(tl.InputSchema, &s)
			if s.AdditionalProperties == nil || *s.AdditionalProperties {
				return fmt.Sprintf("tools.%d.custom: For 'object' type, 'additionalProperties' must be explicitly set to false", i)
			}
		}
	}
	if len(req.System) > 0 && req.System[0] == '[' {
		var sys []fakeBlock
		json.Unmarshal(req.System, &sys)
		for _, b := range sys {
			if msg := mark(b.CacheControl); msg != "" {
				return msg
			}
		}
	}
	var calls map[string]bool
	for i, m := range req.Messages {
		if want := []string{"user", "assistant"}[i%2]; m.Role != want {
			return fmt.Sprintf("messages: roles must alternate between \"user\" and \"assistant\", starting with \"user\" (messages.%d is %q)", i, m.Role)
		}
		if len(m.Content) == 0 {
			return fmt.Sprintf("messages.%d: all messages must have non-empty content", i)
		}
		next := map[string]bool{}
		for j, raw := range m.Content {
			var b fakeBlock
			json.Unmarshal(raw, &b)
			if msg := mark(b.CacheControl); msg != "" {
				return msg
			}
			switch b.Type {
			case "thinking", "redacted_thinking":
				if b.CacheControl != nil {
					return fmt.Sprintf("messages.%d.content.%d.%s.cache_control: Thinking blocks cannot be cached directly", i, j, b.Type)
				}
				if b.Type == "redacted_thinking" {
					if b.Data == "" {
						return fmt.Sprintf("messages.%d.content.%d.redacted_thinking.data: Field required", i, j)
					}
					continue
				}
				f.mu.Lock()
				by, ok := f.signed[b.Signature]
				f.mu.Unlock()
				if b.Thinking == nil || !ok || by != req.Model+"\x00"+*b.Thinking {
					return fmt.Sprintf("messages.%d.content.%d: Invalid `signature` in `thinking` block", i, j)
				}
			case "tool_use":
				next[b.ID] = true
			case "tool_result":
				if !calls[b.ToolUseID] {
					return fmt.Sprintf("messages.%d.content.%d: unexpected `tool_use_id` found in `tool_result` blocks: %s. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.", i, j, b.ToolUseID)
				}
			}
		}
		calls = next
	}
	if marks > maxBreakpoints {
		return fmt.Sprintf("A maximum of 4 blocks with cache_control may be provided. Found %d.", marks)
	}
	return ""
}

// cache is the usage of req's prompt, as the API counts it: at each
// breakpoint the longest prefix found in the cache is read, looking back
// from the breakpoint over the 20 block boundaries before it, and the
// breakpoint's own prefix is written when it was not there; what follows
// is input. It returns the usage as JSON.
func (f *fakeAPI) cache(req *fakeRequest) string {
	type boundary struct {
		hash   [32]byte
		tokens int
		marked bool
	}
	var prefix []byte
	var bounds []boundary
	add := func(raw json.RawMessage) {
		var b map[string]any
		json.Unmarshal(raw, &b)
		marked := b["cache_control"] != nil
		delete(b, "cache_control")
		c, _ := json.Marshal(b)
		prefix = append(prefix, c...)
		bounds = append(bounds, boundary{sha256.Sum256(prefix), len(prefix) / 4, marked})
	}
	for _, t := range req.Tools {
		add(t)
	}
	if len(req.System) > 0 && req.System[0] == '[' {
		var sys []json.RawMessage
		json.Unmarshal(req.System, &sys)
		for _, b := range sys {
			add(b)
		}
	} else {
		prefix = append(prefix, req.System...)
	}
	for _, m := range req.Messages {
		prefix = append(prefix, m.Role...)
		for _, b := range m.Content {
			add(b)
		}
	}
	total := len(prefix) / 4
	read, written := 0, 0
	f.mu.Lock()
	for i, b := range bounds {
		if !b.marked {
			continue
		}
		for j := i; j >= 0 && j >= i-20; j-- {
			if _, ok := f.cached[bounds[j].hash]; ok {
				read = max(read, bounds[j].tokens)
				break
			}
		}
	}
	for _, b := range bounds {
		if _, ok := f.cached[b.hash]; b.marked && !ok {
			f.cached[b.hash] = b.tokens
			written = max(written, b.tokens)
		}
	}
	f.mu.Unlock()
	write := max(0, written-read)
	return fmt.Sprintf(`{"input_tokens":%d,"cache_creation_input_tokens":%d,"cache_read_input_tokens":%d,"output_tokens":1}`, total-read-write, write, read)
}

func (f *fakeAPI) requests() []fakeRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.bodies)
}

// SSE helpers for the fake's replies, in the shapes of
// https://docs.anthropic.com/en/docs/build-with-claude/streaming.

func sseEvent(typ string, v any) string {
	b, _ := json.Marshal(v)
	return "event: " + typ + "\ndata: " + string(b) + "\n\n"
}

// fakeStream is a reply of the given blocks: each a map with "type" and
// its fields ("thinking" blocks are streamed as thinking deltas and a
// signature delta; "text" as text deltas; "tool_use" with its input as
// one input_json_delta).
func fakeStream(usage string, stop string, blocks ...map[string]any) string {
	var b strings.Builder
	b.WriteString(sseEvent("message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": "msg_fake", "type": "message", "role": "assistant", "content": []any{}, "model": "fake", "stop_reason": nil, "usage": json.RawMessage(usage)}}))
	for i, blk := range blocks {
		switch blk["type"] {
		case "thinking":
			b.WriteString(sseEvent("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "thinking", "thinking": "", "signature": ""}}))
			if t := blk["thinking"].(string); t != "" {
				b.WriteString(sseEvent("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "thinking_delta", "thinking": t}}))
			}
			b.WriteString(sseEvent("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "signature_delta", "signature": blk["signature"]}}))
		case "redacted_thinking":
			b.WriteString(sseEvent("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": blk}))
		case "text":
			b.WriteString(sseEvent("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "text", "text": ""}}))
			b.WriteString(sseEvent("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "text_delta", "text": blk["text"]}}))
		case "tool_use":
			b.WriteString(sseEvent("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "tool_use", "id": blk["id"], "name": blk["name"], "input": map[string]any{}}}))
			in, _ := json.Marshal(blk["input"])
			b.WriteString(sseEvent("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(in)}}))
		}
		b.WriteString(sseEvent("content_block_stop", map[string]any{"type": "content_block_stop", "index": i}))
	}
	b.WriteString(sseEvent("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop}, "usage": map[string]any{"output_tokens": 42}}))
	b.WriteString(sseEvent("message_stop", map[string]any{"type": "message_stop"}))
	return b.String()
}

func fakeText(text string) fakeReply {
	return func(req *fakeRequest, sign func(string) string, usage string) string {
		return fakeStream(usage, "end_turn", map[string]any{"type": "text", "text": text})
	}
}
