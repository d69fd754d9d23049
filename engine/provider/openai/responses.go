package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/provider"
	"github.com/coda-acp/coda/engine/provider/sse"
)

// The Responses API (POST /responses) lives beside chat completions in
// this package rather than in its own: the two share the vendor's base
// URL and auth, its error bodies and in-stream errors (streamError), its
// effort names (wireEffort) and the piecewise decoding of long argument
// strings; a package of its own would export or copy each.

// Responses is one model behind OpenAI's Responses API, called statelessly
// (store: false): the reasoning items a reply returns, encrypted, go back
// on the next calls of the turn through Response.Replay. It is safe for
// concurrent use.
type Responses struct {
	model string
	opts  Options
	call  sse.Call

	// noStrictField is set once the server refused the strict field
	// itself, whatever its value (a compatible server that has no strict
	// mode): it is left out from then on (see strictOf).
	noStrictField atomic.Bool
	// uploads sends a turn's images through the Files API; a server that
	// refused one (a 4xx: a compatible server without the Files API) gets
	// them inline from then on (responses_files.go).
	uploads provider.Uploader
	once    provider.Once
}

// NewResponses returns the model named model behind the Responses API of
// opts.BaseURL (default DefaultBaseURL; "/responses" is appended).
func NewResponses(model string, opts Options) *Responses {
	opts = opts.WithDefaults("openai", model, DefaultBaseURL)
	m := &Responses{
		model: model,
		opts:  opts,
		call:  opts.Call("/responses", opts.Header("Authorization", "Bearer ")),
	}
	m.uploads = provider.Uploader{Kind: "openai", Opts: opts, Upload: m.upload, Delete: m.deleteFile, Sticky: true}
	return m
}

// Name is the spec the model was chosen by.
func (m *Responses) Name() string { return m.opts.Name }

// Shapes are what the Responses API takes (DESIGN §17): strict functions
// and text.format json_schema in OpenAI's strict subset, a named
// tool_choice (unless the catalog says the model refuses one), json_object
// without a schema.
func (m *Responses) Shapes(*llm.Request) llm.Shapes {
	return llm.Shapes{Strict: llm.StrictOpenAI, ToolChoice: !m.opts.NoForcedTool, Reply: true, ReplyAny: true}
}

// Stream sends req and streams the reply: text and reasoning summaries as
// they come, tool calls whole at the end. A try that fails before anything
// was passed to onDelta is retried as the Retry option allows; a 404 wraps
// llm.ErrModelUnavailable; a server's refusal of a strict tool, the
// named tool choice or the reply's format is an *llm.MechanismError.
//
// A server that refuses the strict field itself (not a schema sent strict)
// is sent none from then on: a call that asked for nothing strict is made
// again at once without it; one that did is left to the engine's
// fall-back, which asks again without strict.
func (m *Responses) Stream(ctx context.Context, req *llm.Request, onDelta func(llm.Delta) error) (*llm.Response, error) {
	resp, asked, err := m.stream(ctx, req, onDelta)
	var me *llm.MechanismError
	if err != nil && errors.As(err, &me) && me.Mechanism == sse.MechanismStrict && (!asked || strictFieldUnknown(err)) && !m.noStrictField.Swap(true) {
		m.once.Warn(m.opts.Log, "no-strict-field", "the server takes no strict field on function tools: it is left out from now on", "model", m.opts.Name)
		if !asked {
			resp, _, err = m.stream(ctx, req, onDelta)
		}
	}
	return resp, err
}

// stream is one call; asked reports whether it asked for anything strict.
func (m *Responses) stream(ctx context.Context, req *llm.Request, onDelta func(llm.Delta) error) (*llm.Response, bool, error) {
	body, shaping, asked, err := m.encodeWith(req, func(im llm.Image) string { return m.uploads.File(ctx, im) })
	if err == nil {
		body, err = provider.WithParams(provider.ParamsResponses, req, body, &shaping)
	}
	if err != nil {
		return nil, asked, fmt.Errorf("%s: %w", m.opts.Name, err)
	}
	var resp *llm.Response
	err = m.call.Within(req.Timeout).DoShaped(ctx, body, shaping, func(ctx context.Context, r *sse.Reader, started *bool) error {
		s := rstream{onDelta: onDelta, started: started, model: m.model}
		m.opts.Budget.Start(&s.text, &s.thinking, &s.kept)
		s.refusal.Max, s.refusal.What = s.text.Max, "refusal"
		var err error
		resp, err = s.read(r)
		return err
	})
	if err != nil {
		return nil, asked, err
	}
	resp.Usage.ContextWindow = m.opts.ContextWindow
	return resp, asked, nil
}

// strictFieldUnknown reports whether err says the server does not know
// the strict field at all (Gemini's OpenAI endpoint: "Unknown name
// \"strict\"…: Cannot find field"; pydantic-based servers: "Extra inputs
// are not permitted"), rather than that a schema does not fit strict mode.
func strictFieldUnknown(err error) bool {
	msg := strings.ToLower(err.Error())
	for _, w := range []string{"unknown name", "unknown field", "unrecognized", "cannot find field", "extra inputs are not permitted", "extra_forbidden", "unsupported parameter"} {
		if strings.Contains(msg, w) {
			return true
		}
	}
	return false
}

// The request body of POST /responses, as much of it as coda sends.
type rRequest struct {
	Model           string       `json:"model"`
	Instructions    string       `json:"instructions,omitempty"`
	Input           []any        `json:"input"`
	Tools           []rTool      `json:"tools,omitempty"`
	ToolChoice      *rToolChoice `json:"tool_choice,omitempty"`
	Text            *rText       `json:"text,omitempty"`
	Reasoning       *rReasoning  `json:"reasoning,omitempty"`
	MaxOutputTokens int          `json:"max_output_tokens,omitempty"`
	Store           bool         `json:"store"`
	Include         []string     `json:"include,omitempty"`
	Stream          bool         `json:"stream"`
	PromptCacheKey  string       `json:"prompt_cache_key,omitempty"` // cacheKey
}

// rTool is a function tool. Strict is true where the schema fits strict
// mode (llm.ToolSpec.Strict), else false: the Responses API takes a
// function without it as strict ("strict: Whether to enforce strict
// parameter validation. Default true", the API reference's FunctionTool)
// and refuses a schema that does not fit. It is left out only for a
// server that refused the field itself (Responses.noStrictField).
type rTool struct {
	Type        string          `json:"type"` // "function"
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      *bool           `json:"strict,omitempty"`
}

type rToolChoice struct {
	Type string `json:"type"` // "function"
	Name string `json:"name"`
}

type rText struct {
	Format rFormat `json:"format"`
}

// rFormat is text.format. Strict is sent only when true: the format's
// default is false.
type rFormat struct {
	Type   string          `json:"type"` // "json_schema" | "json_object"
	Name   string          `json:"name,omitempty"`
	Schema json.RawMessage `json:"schema,omitempty"`
	Strict bool            `json:"strict,omitempty"`
}

type rReasoning struct {
	Effort  string `json:"effort,omitempty"`
	Summary string `json:"summary,omitempty"`
}

// Input items.
type (
	rMessage struct {
		Type    string `json:"type"` // "message"
		Role    string `json:"role"`
		Content any    `json:"content"` // a string, or parts
	}
	// rOutputMessage is an assistant message sent back with the id it
	// came with, which a reasoning item before it is paired with.
	rOutputMessage struct {
		Type    string      `json:"type"` // "message"
		ID      string      `json:"id"`
		Role    string      `json:"role"`
		Status  string      `json:"status"`
		Content []rTextPart `json:"content"`
	}
	rTextPart struct {
		Type     string `json:"type"` // "input_text" | "output_text" | "input_image"
		Text     string `json:"text,omitempty"`
		ImageURL string `json:"image_url,omitempty"`
		FileID   string `json:"file_id,omitempty"` // input_image: an uploaded file (responses_files.go)
	}
	rFunctionCall struct {
		Type      string `json:"type"` // "function_call"
		ID        string `json:"id,omitempty"`
		CallID    string `json:"call_id"`
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	rFunctionOutput struct {
		Type   string `json:"type"` // "function_call_output"
		CallID string `json:"call_id"`
		Output string `json:"output"`
	}
)

// includeEncrypted asks for each reasoning item's encrypted content: with
// store false, the only way to send the reasoning back.
const includeEncrypted = "reasoning.encrypted_content"

func (m *Responses) reasons() bool { return reasons(m.model, &m.opts) }

// encodeWith builds the request body, with fileID saying which uploaded
// file holds an image ("" sends it inline; nil uploads none). The system
// prompt is the instructions; the conversation is input items, an assistant message expanded from its
// Replay (the reasoning items, encrypted, in the order they came, and the
// ids its calls and text came with) so that each reasoning item precedes
// the item it was produced with, as the API requires of a stateless call.
// shaping says which of the answer's mechanisms the body carries (a strict
// field, even false, is one a server may refuse); asked, whether it asks
// for anything strict.
func (m *Responses) encodeWith(req *llm.Request, fileID func(llm.Image) string) (body []byte, shaping sse.Shaping, asked bool, err error) {
	if fileID == nil {
		fileID = func(llm.Image) string { return "" }
	}
	r := rRequest{
		Model:           m.model,
		Instructions:    req.System,
		Input:           make([]any, 0, len(req.Messages)+2),
		MaxOutputTokens: m.opts.MaxTokens,
		Stream:          true,
		PromptCacheKey:  cacheKey(m.opts.BaseURL, req),
	}
	for i := range req.Messages {
		msg := &req.Messages[i]
		switch msg.Role {
		case llm.RoleAssistant:
			r.Input = appendAssistant(r.Input, msg, m.model)
		case llm.RoleTool:
			text := msg.Text
			if msg.IsError {
				text = "Error: " + text // the API has no error flag for an output
			}
			r.Input = append(r.Input, rFunctionOutput{Type: "function_call_output", CallID: msg.ToolCallID, Output: text})
		default:
			r.Input = append(r.Input, m.userItem(msg, fileID))
		}
	}
	for _, t := range req.Tools {
		params := t.Schema
		if len(bytes.TrimSpace(params)) == 0 {
			params = emptySchema
		}
		tool := rTool{Type: "function", Name: t.Name, Description: t.Description, Parameters: params}
		if t.Strict || !m.noStrictField.Load() {
			tool.Strict = &t.Strict
			shaping.Strict = true
		}
		asked = asked || t.Strict
		r.Tools = append(r.Tools, tool)
		if t.Name == req.ToolChoice && !m.opts.NoForcedTool {
			r.ToolChoice = &rToolChoice{Type: "function", Name: t.Name}
			shaping.ToolChoice = true
		}
	}
	if f := req.Reply; f != nil {
		shaping.Reply = true
		if len(bytes.TrimSpace(f.Schema)) == 0 {
			r.Text = &rText{Format: rFormat{Type: "json_object"}}
		} else {
			r.Text = &rText{Format: rFormat{Type: "json_schema", Name: schemaName(f), Schema: f.Schema, Strict: f.Strict}}
			shaping.Strict = shaping.Strict || f.Strict
			asked = asked || f.Strict
		}
	}
	effort := m.opts.EffortOf(req)
	switch {
	case effort == llm.EffortOff && !m.reasons():
		effort = "" // a model that does not reason takes no reasoning parameter, not even none
	case effort != "" && doesNotReason(m.model, &m.opts):
		m.once.Warn(m.opts.Log, "effort-no-reasoning", "the model does not reason: no reasoning effort is sent", "model", m.opts.Name, "effort", effort)
		effort = ""
	}
	if effort != "" || m.reasons() {
		r.Reasoning = &rReasoning{Effort: wireEffort(effort)}
		if effort != llm.EffortOff {
			r.Reasoning.Summary = "auto"
		}
		r.Include = []string{includeEncrypted}
	}
	body, err = json.Marshal(r)
	return body, shaping, asked, err
}

// userItem is a user message: its text, or its images (input_image parts
// naming the file fileID uploaded, else with data: URLs) then its text;
// for a model without vision, the text with a line in each image's place.
func (m *Responses) userItem(msg *llm.Message, fileID func(llm.Image) string) rMessage {
	switch {
	case len(msg.Images) == 0:
		return rMessage{Type: "message", Role: "user", Content: msg.Text}
	case m.opts.NoVision:
		return rMessage{Type: "message", Role: "user", Content: msg.TextWithStandIns()}
	}
	parts := make([]rTextPart, 0, len(msg.Images)+1)
	for _, im := range msg.Images {
		if id := fileID(im); id != "" {
			parts = append(parts, rTextPart{Type: "input_image", FileID: id})
		} else {
			parts = append(parts, rTextPart{Type: "input_image", ImageURL: "data:" + im.MIMEType + ";base64," + im.Base64()})
		}
	}
	if msg.Text != "" {
		parts = append(parts, rTextPart{Type: "input_text", Text: msg.Text})
	}
	return rMessage{Type: "message", Role: "user", Content: parts}
}

// A Responses reply's Replay: its output items in order, the reasoning
// items whole (as response.output_item.done gave them, encrypted content
// and all), the others as stubs naming the ids their text and calls came
// with, filled from the Message when it is sent back; and the model that
// wrote them, since another cannot read its encrypted reasoning ("The
// encrypted content for item rs_… could not be verified").
type rReplay struct {
	Model string            `json:"model,omitempty"`
	Items []json.RawMessage `json:"items"`
}

// replayStub is a reasoning item, or a stub of a message or a function
// call.
type replayStub struct {
	Type   string `json:"type"`
	ID     string `json:"id"`
	CallID string `json:"call_id,omitempty"`
}

// appendAssistant appends an assistant message's items, for model: from
// its Replay when it has one of this API's written by model (a stage's
// fallback model cannot read another's reasoning), else its text and
// calls alone.
func appendAssistant(input []any, msg *llm.Message, model string) []any {
	sent := map[string]bool{}
	textSent := false
	var rp rReplay
	if len(msg.Replay) > 0 && json.Unmarshal(msg.Replay, &rp) == nil && (rp.Model == "" || rp.Model == model) {
		for _, raw := range rp.Items {
			var stub replayStub
			if json.Unmarshal(raw, &stub) != nil {
				continue
			}
			switch stub.Type {
			case "reasoning":
				input = append(input, raw)
			case "message":
				if textSent {
					continue
				}
				input = append(input, rOutputMessage{Type: "message", ID: stub.ID, Role: "assistant", Status: "completed",
					Content: []rTextPart{{Type: "output_text", Text: msg.Text}}})
				textSent = true
			case "function_call":
				for _, tc := range msg.ToolCalls {
					if tc.ID == stub.CallID && !sent[tc.ID] {
						input = append(input, rFunctionCall{Type: "function_call", ID: stub.ID, CallID: tc.ID, Name: tc.Name, Arguments: arguments(tc.Arguments)})
						sent[tc.ID] = true
					}
				}
			}
		}
	}
	if !textSent && msg.Text != "" {
		input = append(input, rMessage{Type: "message", Role: "assistant", Content: msg.Text})
	}
	for _, tc := range msg.ToolCalls {
		if !sent[tc.ID] {
			input = append(input, rFunctionCall{Type: "function_call", CallID: tc.ID, Name: tc.Name, Arguments: arguments(tc.Arguments)})
		}
	}
	return input
}

var _ llm.Model = (*Responses)(nil)
