package openai

import (
	"bytes"
	"encoding/json"

	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/provider"
	"github.com/coda-acp/coda/engine/provider/sse"
)

// The request body of POST /chat/completions, as much of it as coda sends.
type request struct {
	Model               string          `json:"model"`
	Messages            []message       `json:"messages"`
	Tools               []tool          `json:"tools,omitempty"`
	ToolChoice          *toolChoice     `json:"tool_choice,omitempty"`
	ResponseFormat      *responseFormat `json:"response_format,omitempty"`
	ReasoningEffort     string          `json:"reasoning_effort,omitempty"`
	Reasoning           *reasoningOpt   `json:"reasoning,omitempty"` // OpenRouter's
	Stream              bool            `json:"stream"`
	StreamOptions       streamOptions   `json:"stream_options"`
	MaxTokens           int             `json:"max_tokens,omitempty"`
	MaxCompletionTokens int             `json:"max_completion_tokens,omitempty"`
	// PromptCacheKey routes the prompt cache (cacheKey).
	PromptCacheKey string `json:"prompt_cache_key,omitempty"`

	// A constrained reply in a server's own field (Options.Server):
	// vLLM's structured_outputs, llama.cpp's json_schema.
	StructuredOutputs *structuredOutputs `json:"structured_outputs,omitempty"`
	JSONSchema        json.RawMessage    `json:"json_schema,omitempty"`
}

// structuredOutputs is vLLM's constraint on a reply
// (https://docs.vllm.ai/en/latest/features/structured_outputs/, "Online
// Serving"): exactly one of its kinds; coda uses json (a JSON Schema) and
// json_object (any JSON object).
type structuredOutputs struct {
	JSON       json.RawMessage `json:"json,omitempty"`
	JSONObject bool            `json:"json_object,omitempty"`
}

// toolChoice names the one function the model must call.
type toolChoice struct {
	Type     string `json:"type"` // "function"
	Function struct {
		Name string `json:"name"`
	} `json:"function"`
}

// responseFormat asks for a JSON reply: json_schema with a schema, else
// json_object.
type responseFormat struct {
	Type       string      `json:"type"`
	JSONSchema *jsonSchema `json:"json_schema,omitempty"`
}

type jsonSchema struct {
	Name   string          `json:"name"`
	Schema json.RawMessage `json:"schema"`
	Strict bool            `json:"strict,omitempty"`
}

type reasoningOpt struct {
	Effort string `json:"effort"`
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
	// ExtraContent is what the server sent with the call, sent back as it
	// came: Gemini's OpenAI endpoint puts the thought signature there
	// ({"google": {"thought_signature": ...}}), which a Gemini 3 model
	// refuses the next call without.
	ExtraContent json.RawMessage `json:"extra_content,omitempty"`
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
	Strict      bool            `json:"strict,omitempty"`
}

// emptySchema is what a tool without a schema is declared with: servers
// refuse a function without parameters.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// encode builds the request body: the system prompt first as a system
// message, then the conversation. Thinking is not sent back: chat
// completions has no field for it, and some servers refuse one. What the
// server asked to have back with a tool call (extra_content, kept in the
// reply's Replay) goes back with it. shaping says which of the answer's
// mechanisms the body asks for (DESIGN §17).
func (m *Model) encode(req *llm.Request) (body []byte, shaping sse.Shaping, err error) {
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
	r.PromptCacheKey = cacheKey(m.opts.BaseURL, req)
	if req.System != "" {
		r.Messages = append(r.Messages, message{Role: "system", Content: &req.System})
	}
	for i := range req.Messages {
		msg := &req.Messages[i]
		switch msg.Role {
		case llm.RoleAssistant:
			out := message{Role: "assistant"}
			if msg.Text != "" || len(msg.ToolCalls) == 0 {
				out.Content = &msg.Text
			}
			extra := chatReplay(msg.Replay)
			for _, tc := range msg.ToolCalls {
				out.ToolCalls = append(out.ToolCalls, toolCall{
					ID:           tc.ID,
					Type:         "function",
					Function:     functionCall{Name: tc.Name, Arguments: arguments(tc.Arguments)},
					ExtraContent: extra[tc.ID],
				})
			}
			r.Messages = append(r.Messages, out)
		case llm.RoleTool:
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
			Function: function{Name: t.Name, Description: t.Description, Parameters: params, Strict: t.Strict},
		})
		shaping.Strict = shaping.Strict || t.Strict
		if t.Name == req.ToolChoice && !m.opts.NoForcedTool {
			r.ToolChoice = &toolChoice{Type: "function"}
			r.ToolChoice.Function.Name = t.Name
			shaping.ToolChoice = true
		}
	}
	if f := req.Reply; f != nil {
		shaping.Reply = true
		m.replyFormat(&r, f, &shaping)
	}
	m.setEffort(&r, req)
	body, err = json.Marshal(r)
	return body, shaping, err
}

// replyFormat asks for the reply constrained to f, in the server's own
// field where Options.Server names one:
//
//   - vLLM: structured_outputs {json: schema}, or {json_object: true}
//     without one (the fields that replaced guided_json in v0.12);
//   - llama.cpp: the top-level json_schema, which its server reads before
//     response_format ("Cannot use both json_schema and grammar"); without
//     a schema, response_format json_object, its any-object form;
//   - anyone else: response_format json_schema (strict where f fits
//     OpenAI's strict subset), or json_object without a schema.
//
// The server's own fields constrain decoding whatever the schema: they
// have no strict flag. A server that refuses one is asked again without
// (the reply's mechanism, llm.MechanismError).
func (m *Model) replyFormat(r *request, f *llm.ReplyFormat, shaping *sse.Shaping) {
	schema := f.Schema
	if len(bytes.TrimSpace(schema)) == 0 {
		schema = nil
	}
	switch {
	case m.opts.Server == provider.ServerVLLM && schema != nil:
		r.StructuredOutputs = &structuredOutputs{JSON: schema}
	case m.opts.Server == provider.ServerVLLM:
		r.StructuredOutputs = &structuredOutputs{JSONObject: true}
	case m.opts.Server == provider.ServerLlamaCpp && schema != nil:
		r.JSONSchema = schema
	case schema == nil:
		r.ResponseFormat = &responseFormat{Type: "json_object"}
	default:
		r.ResponseFormat = &responseFormat{Type: "json_schema", JSONSchema: &jsonSchema{Name: schemaName(f), Schema: schema, Strict: f.Strict}}
		shaping.Strict = shaping.Strict || f.Strict
	}
}

// schemaName is the name a reply's schema is sent under: the format's own,
// else "answer". OpenAI takes letters, digits, '_' and '-', at most 64.
func schemaName(f *llm.ReplyFormat) string {
	name := f.Name
	if name == "" {
		return "answer"
	}
	b := []byte(name)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	return string(b[:min(len(b), 64)])
}

// userMessage is a user message: its images first, as image_url parts,
// then its text; or, for a model without vision, the text with a line in
// each image's place.
//
// An image goes inline at every call, as a data: URL (base64 encoded once
// a turn): chat completions has no way to name an uploaded image. Its
// image_url part takes a URL, of the web or data:, and its file part
// (file_id) is for documents such as PDFs
// (platform.openai.com/docs/api-reference/chat/create, the user message's
// content parts; the file-inputs guide); the servers that speak chat
// completions beside OpenAI (Ollama, vLLM, llama.cpp) have no Files API.
// The Responses API names the file instead (responses_files.go).
func (m *Model) userMessage(msg *llm.Message) message {
	switch {
	case len(msg.Images) == 0:
		return message{Role: "user", Content: &msg.Text}
	case m.opts.NoVision:
		text := msg.TextWithStandIns()
		return message{Role: "user", Content: &text}
	}
	parts := make([]part, 0, len(msg.Images)+1)
	for _, im := range msg.Images {
		url := "data:" + im.MIMEType + ";base64," + im.Base64()
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
