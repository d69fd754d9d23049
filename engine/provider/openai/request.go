package openai

import (
	"bytes"
	"encoding/base64"
	"encoding/json"

	"github.com/coda-acp/coda/engine"
)

// The request body of POST /chat/completions, as much of it as coda sends.
type request struct {
	Model               string        `json:"model"`
	Messages            []message     `json:"messages"`
	Tools               []tool        `json:"tools,omitempty"`
	Stream              bool          `json:"stream"`
	StreamOptions       streamOptions `json:"stream_options"`
	MaxTokens           int           `json:"max_tokens,omitempty"`
	MaxCompletionTokens int           `json:"max_completion_tokens,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type message struct {
	Role string `json:"role"`
	// Content is a *string, nil (null) for an assistant message that only
	// calls tools, or a user message's []part when it carries images.
	Content    any        `json:"content"`
	ToolCalls  []toolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

// A part is one piece of a user message with images: text, or an image
// as a data: URL.
type part struct {
	Type     string    `json:"type"`
	Text     string    `json:"text,omitempty"`
	ImageURL *imageURL `json:"image_url,omitempty"`
}

type imageURL struct {
	URL string `json:"url"`
}

type toolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function functionCall `json:"function"`
}

type functionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"` // a JSON object, as a string
}

type tool struct {
	Type     string   `json:"type"`
	Function function `json:"function"`
}

type function struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

// emptySchema is what a tool without a schema is declared with: servers
// refuse a function without parameters.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// encode builds the request body: the system prompt first as a system
// message, then the conversation. Thinking is not sent back: chat
// completions has no field for it, and some servers refuse one.
func (m *Model) encode(req *engine.Request) ([]byte, error) {
	r := request{
		Model:         m.model,
		Stream:        true,
		StreamOptions: streamOptions{IncludeUsage: true},
		Messages:      make([]message, 0, len(req.Messages)+1),
	}
	if m.opts.MaxTokens > 0 {
		if isOpenAI(m.opts.BaseURL) {
			r.MaxCompletionTokens = m.opts.MaxTokens
		} else {
			r.MaxTokens = m.opts.MaxTokens
		}
	}
	if req.System != "" {
		r.Messages = append(r.Messages, message{Role: "system", Content: &req.System})
	}
	for i := range req.Messages {
		msg := &req.Messages[i]
		switch msg.Role {
		case engine.RoleAssistant:
			out := message{Role: "assistant"}
			if msg.Text != "" || len(msg.ToolCalls) == 0 {
				out.Content = &msg.Text
			}
			for _, tc := range msg.ToolCalls {
				out.ToolCalls = append(out.ToolCalls, toolCall{
					ID:       tc.ID,
					Type:     "function",
					Function: functionCall{Name: tc.Name, Arguments: arguments(tc.Arguments)},
				})
			}
			r.Messages = append(r.Messages, out)
		case engine.RoleTool:
			text := msg.Text
			if msg.IsError {
				// Chat completions has no error flag for a tool result.
				text = "Error: " + text
			}
			r.Messages = append(r.Messages, message{Role: "tool", Content: &text, ToolCallID: msg.ToolCallID})
		default:
			r.Messages = append(r.Messages, m.userMessage(msg))
		}
	}
	for _, t := range req.Tools {
		params := t.Schema
		if len(bytes.TrimSpace(params)) == 0 {
			params = emptySchema
		}
		r.Tools = append(r.Tools, tool{
			Type:     "function",
			Function: function{Name: t.Name, Description: t.Description, Parameters: params},
		})
	}
	return json.Marshal(r)
}

// userMessage is a user message: its images first, as image_url parts,
// then its text; or, for a model without vision, the text with a line in
// each image's place.
func (m *Model) userMessage(msg *engine.Message) message {
	switch {
	case len(msg.Images) == 0:
		return message{Role: "user", Content: &msg.Text}
	case m.opts.NoVision:
		text := msg.TextWithStandIns()
		return message{Role: "user", Content: &text}
	}
	parts := make([]part, 0, len(msg.Images)+1)
	for _, im := range msg.Images {
		url := "data:" + im.MIMEType + ";base64," + base64.StdEncoding.EncodeToString(im.Data)
		parts = append(parts, part{Type: "image_url", ImageURL: &imageURL{URL: url}})
	}
	if msg.Text != "" {
		parts = append(parts, part{Type: "text", Text: msg.Text})
	}
	return message{Role: "user", Content: parts}
}

func arguments(raw json.RawMessage) string {
	if len(bytes.TrimSpace(raw)) == 0 {
		return "{}"
	}
	return string(raw)
}
