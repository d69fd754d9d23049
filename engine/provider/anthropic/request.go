package anthropic

import (
	"bytes"
	"encoding/json"

	"github.com/coda-acp/coda/engine"
)

// The request body of POST /v1/messages, as much of it as coda sends.
type request struct {
	Model     string    `json:"model"`
	MaxTokens int       `json:"max_tokens"`
	System    string    `json:"system,omitempty"`
	Messages  []message `json:"messages"`
	Tools     []tool    `json:"tools,omitempty"`
	Thinking  *thinking `json:"thinking,omitempty"`
	Stream    bool      `json:"stream"`
}

type thinking struct {
	Type         string `json:"type"`
	BudgetTokens int    `json:"budget_tokens"`
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

	Thinking  string `json:"thinking,omitempty"` // thinking
	Signature string `json:"signature,omitempty"`

	Data string `json:"data,omitempty"` // redacted_thinking

	Source *imageSource `json:"source,omitempty"` // image
}

// imageSource is an image block's bytes, sent inline.
type imageSource struct {
	Type      string `json:"type"` // "base64"
	MediaType string `json:"media_type"`
	Data      []byte `json:"data"` // encoded as base64 by encoding/json
}

type tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// encode builds the request body. The system prompt is the top-level
// system field. Tool results go back as tool_result blocks of a user
// message; consecutive messages of one role are merged into one, since the
// API wants the roles to alternate. Empty text blocks, which the API
// refuses, are left out. An assistant's thinking is sent back only with the
// signature it came with.
func (m *Model) encode(req *engine.Request) ([]byte, error) {
	r := request{
		Model:     m.model,
		MaxTokens: m.opts.MaxTokens,
		System:    req.System,
		Stream:    true,
		Messages:  make([]message, 0, len(req.Messages)),
	}
	if m.opts.ThinkingBudget > 0 {
		r.Thinking = &thinking{Type: "enabled", BudgetTokens: m.opts.ThinkingBudget}
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
	for i := range req.Messages {
		msg := &req.Messages[i]
		switch msg.Role {
		case engine.RoleAssistant:
			var blocks []block
			if len(msg.Replay) > 0 {
				var signed []block
				if json.Unmarshal(msg.Replay, &signed) == nil {
					blocks = append(blocks, signed...)
				}
			}
			if msg.Text != "" {
				blocks = append(blocks, block{Type: "text", Text: msg.Text})
			}
			for _, tc := range msg.ToolCalls {
				blocks = append(blocks, block{Type: "tool_use", ID: tc.ID, Name: tc.Name, Input: input(tc.Arguments)})
			}
			add("assistant", blocks...)
		case engine.RoleTool:
			add("user", block{Type: "tool_result", ToolUseID: msg.ToolCallID, Content: msg.Text, IsError: msg.IsError})
		default:
			text := msg.Text
			if m.opts.NoVision {
				text = msg.TextWithStandIns()
			} else {
				// Images first: Claude reads them best before the text.
				for _, im := range msg.Images {
					add("user", block{Type: "image", Source: &imageSource{Type: "base64", MediaType: im.MIMEType, Data: im.Data}})
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
		r.Tools = append(r.Tools, tool{Name: t.Name, Description: t.Description, InputSchema: schema})
	}
	return json.Marshal(r)
}

// input is a tool call's arguments as the API takes them: a JSON object.
// Arguments that are not one (a model's broken JSON, kept as it was sent)
// go back as {}, since the request could not be encoded otherwise.
func input(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' || !json.Valid(raw) {
		return json.RawMessage("{}")
	}
	return raw
}
