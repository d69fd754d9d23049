package anthropic

import (
	"bytes"
	"encoding/json"

	"github.com/coda-acp/coda/engine/llm"
)

// The request body of POST /v1/messages, as much of it as coda sends
// (https://docs.anthropic.com/en/api/messages).
type request struct {
	Model     string    `json:"model"`
	MaxTokens int       `json:"max_tokens"`
	System    any       `json:"system,omitempty"` // a string, or []block with a cache breakpoint
	Messages  []message `json:"messages"`
	Tools     []tool    `json:"tools,omitempty"`
	// ToolChoice is {"type": "tool", "name"} for a forced call, or
	// {"type": "auto"} where the API would refuse one.
	ToolChoice   *toolChoice   `json:"tool_choice,omitempty"`
	Thinking     *thinking     `json:"thinking,omitempty"`
	OutputConfig *outputConfig `json:"output_config,omitempty"`
	Stream       bool          `json:"stream"`

	// files says an image block names an uploaded file: the request
	// carries the Files API's beta header (files.go).
	files bool
}

// thinking is extended thinking: {"type": "enabled", "budget_tokens"} on
// the models that take a budget, {"type": "adaptive", "display"} on the
// later ones, {"type": "disabled"} to turn off a model's default.
type thinking struct {
	Type         string `json:"type"`
	BudgetTokens int    `json:"budget_tokens,omitempty"`
	Display      string `json:"display,omitempty"`
}

type outputConfig struct {
	Effort string        `json:"effort,omitempty"`
	Format *outputFormat `json:"format,omitempty"`
}

// outputFormat is a JSON output: the reply is JSON its schema accepts
// (https://docs.anthropic.com/en/docs/build-with-claude/structured-outputs).
type outputFormat struct {
	Type   string          `json:"type"` // "json_schema"
	Schema json.RawMessage `json:"schema"`
}

type toolChoice struct {
	Type string `json:"type"`
	Name string `json:"name,omitempty"`
}

type message struct {
	Role    string  `json:"role"`
	Content []block `json:"content"`
}

// A block is one content block, of any type; the fields of the others stay
// empty and are left out.
type block struct {
	Type string `json:"type"`

	Text string `json:"text,omitempty"` // text

	ID    string          `json:"id,omitempty"` // tool_use
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`

	ToolUseID string `json:"tool_use_id,omitempty"` // tool_result
	Content   string `json:"content,omitempty"`
	IsError   bool   `json:"is_error,omitempty"`

	// thinking: Thinking is a pointer so that a block whose thinking was
	// not displayed (display "omitted") goes back with its empty text.
	Thinking  *string `json:"thinking,omitempty"`
	Signature string  `json:"signature,omitempty"`

	Data string `json:"data,omitempty"` // redacted_thinking

	Source *imageSource `json:"source,omitempty"` // image

	CacheControl *cacheControl `json:"cache_control,omitempty"`
}

// cacheControl marks a prompt-cache breakpoint: the request up to and
// including the block is cached.
type cacheControl struct {
	Type string `json:"type"` // "ephemeral"
}

// imageSource is an image block's bytes, sent inline, or the file they
// were uploaded to (files.go).
type imageSource struct {
	Type      string `json:"type"` // "base64" | "file"
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"` // llm.Image.Base64: encoded once a turn
	FileID    string `json:"file_id,omitempty"`
}

type tool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"input_schema"`
	Strict       bool            `json:"strict,omitempty"`
	CacheControl *cacheControl   `json:"cache_control,omitempty"`
}

var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// encodeWith builds the request body into out, with fileID saying which
// uploaded file holds an image ("" sends it inline; nil uploads none).
// The system prompt is the top-level system field. Tool results go back
// as tool_result blocks of a user message; consecutive messages of one
// role are merged into one, since the API wants the roles to alternate.
// Empty text blocks, which the API refuses, are left out. A reply goes
// back block for block with its signed thinking (replay.go).
//
// Prompt caching, unless Options.NoCache: a breakpoint ends the system
// prompt (the tools come before it, so it caches both; the last tool
// carries it when there is no system prompt), and one ends each of the
// last two messages, so that a tool loop's next call reads all but its
// newest turn from the cache, and the one after still finds the turn
// before if a call in between missed it; and one ends the messages that
// repeat the previous turn's last request (llm.Request.CachedPrefix), so
// that a turn's first call reads them however many blocks it added after
// them (the API looks back 20 blocks from a breakpoint). Four breakpoints
// at most, the API's limit.
func (m *Model) encodeWith(req *llm.Request, fileID func(llm.Image) string, out *request) ([]byte, error) {
	if fileID == nil {
		fileID = func(llm.Image) string { return "" }
	}
	r := request{
		Model:     m.model,
		MaxTokens: m.opts.MaxTokens,
		Stream:    true,
		Messages:  make([]message, 0, len(req.Messages)),
	}
	add := func(role string, blocks ...block) {
		if len(blocks) == 0 {
			return
		}
		if n := len(r.Messages); n > 0 && r.Messages[n-1].Role == role {
			r.Messages[n-1].Content = append(r.Messages[n-1].Content, blocks...)
			return
		}
		r.Messages = append(r.Messages, message{Role: role, Content: blocks})
	}
	prefixEnd := [2]int{-1, -1} // the message and block where CachedPrefix ends
	for i := range req.Messages {
		if i == req.CachedPrefix && len(r.Messages) > 0 {
			last := len(r.Messages) - 1
			prefixEnd = [2]int{last, len(r.Messages[last].Content)}
		}
		msg := &req.Messages[i]
		switch msg.Role {
		case llm.RoleAssistant:
			add("assistant", m.assistantBlocks(msg)...)
		case llm.RoleTool:
			add("user", block{Type: "tool_result", ToolUseID: msg.ToolCallID, Content: msg.Text, IsError: msg.IsError})
		default:
			text := msg.Text
			if m.opts.NoVision {
				text = msg.TextWithStandIns()
			} else {
				// Images first: Claude reads them best before the text.
				// An uploaded image is named by its file, in the same
				// place: the prompt-cached prefix holds it as it held the
				// bytes.
				for _, im := range msg.Images {
					if id := fileID(im); id != "" {
						add("user", block{Type: "image", Source: &imageSource{Type: "file", FileID: id}})
						r.files = true
					} else {
						add("user", block{Type: "image", Source: &imageSource{Type: "base64", MediaType: im.MIMEType, Data: im.Base64()}})
					}
				}
			}
			if text != "" {
				add("user", block{Type: "text", Text: text})
			}
		}
	}
	for _, t := range req.Tools {
		schema := t.Schema
		if len(bytes.TrimSpace(schema)) == 0 {
			schema = emptySchema
		}
		r.Tools = append(r.Tools, tool{Name: t.Name, Description: t.Description, InputSchema: schema, Strict: t.Strict})
	}

	thinkingOn := m.thinking(&r, m.opts.EffortOf(req)) && m.loopThinking(req, &r)
	if req.ToolChoice != "" && len(r.Tools) > 0 {
		// A forced tool is refused with thinking on ("Thinking may not be
		// enabled when tool_choice forces tool use"), and by the models
		// that never take one: they are asked for auto.
		if thinkingOn || m.opts.NoForcedTool {
			r.ToolChoice = &toolChoice{Type: "auto"}
		} else {
			r.ToolChoice = &toolChoice{Type: "tool", Name: req.ToolChoice}
		}
	}
	if req.Reply != nil && len(bytes.TrimSpace(req.Reply.Schema)) > 0 {
		// JSON outputs take a schema; without one the reply is left free
		// (the API has no "any JSON" mode) and coda's checks hold it.
		if r.OutputConfig == nil {
			r.OutputConfig = &outputConfig{}
		}
		r.OutputConfig.Format = &outputFormat{Type: "json_schema", Schema: req.Reply.Schema}
	}

	cache := !m.opts.NoCache
	switch {
	case req.System != "" && cache:
		r.System = []block{{Type: "text", Text: req.System, CacheControl: ephemeral()}}
	case req.System != "":
		r.System = req.System
	case cache && len(r.Tools) > 0:
		r.Tools[len(r.Tools)-1].CacheControl = ephemeral()
	}
	if cache {
		for i, marked := len(r.Messages)-1, 0; i >= 0 && marked < 2; i-- {
			if markLast(r.Messages[i].Content) {
				marked++
			}
		}
		if m := prefixEnd[0]; m >= 0 {
			// The blocks of the prefix's last message: later ones of the
			// same role were merged after them.
			content := r.Messages[m].Content[:prefixEnd[1]]
			if !marked(content) {
				markLast(content)
			}
		}
	}
	*out = r
	return json.Marshal(&r)
}

func ephemeral() *cacheControl { return &cacheControl{Type: "ephemeral"} }

// markLast puts a cache breakpoint on the last block of content that can
// carry one (not thinking, which cannot be marked), reporting whether
// there was one.
func markLast(content []block) bool {
	for i := len(content) - 1; i >= 0; i-- {
		switch content[i].Type {
		case "thinking", "redacted_thinking":
			continue
		}
		content[i].CacheControl = ephemeral()
		return true
	}
	return false
}

// marked reports whether content's last block that can carry a
// breakpoint carries one.
func marked(content []block) bool {
	for i := len(content) - 1; i >= 0; i-- {
		switch content[i].Type {
		case "thinking", "redacted_thinking":
			continue
		}
		return content[i].CacheControl != nil
	}
	return false
}

// input is a tool call's arguments as the API takes them: a JSON object.
// Arguments that are not one (a model's broken JSON, kept as it was sent,
// or arguments cut at their cap) go back as {}, since the request could not
// be encoded otherwise.
func input(tc *llm.ToolCall) json.RawMessage {
	raw := bytes.TrimSpace(tc.Arguments)
	if tc.Dropped > 0 || len(raw) == 0 || raw[0] != '{' || !json.Valid(raw) {
		return json.RawMessage("{}")
	}
	return raw
}
