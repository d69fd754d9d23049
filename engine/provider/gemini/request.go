package gemini

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/coda-acp/coda/engine/llm"
)

// The request body of models.streamGenerateContent, as much of it as coda
// sends (https://ai.google.dev/api/generate-content).
type request struct {
	Contents          []content         `json:"contents"`
	SystemInstruction *content          `json:"systemInstruction,omitempty"`
	Tools             []toolSet         `json:"tools,omitempty"`
	ToolConfig        *toolConfig       `json:"toolConfig,omitempty"`
	GenerationConfig  *generationConfig `json:"generationConfig,omitempty"`
}

type content struct {
	Role  string `json:"role,omitempty"` // "user" or "model"
	Parts []part `json:"parts"`
}

// A part is one part of a content, of any kind; the fields of the others
// stay empty and are left out. Text is a pointer because a part may carry
// an empty text with its thought signature, as a stream's last chunk does,
// and goes back so.
type part struct {
	Text             *string           `json:"text,omitempty"`
	Thought          bool              `json:"thought,omitempty"`
	ThoughtSignature string            `json:"thoughtSignature,omitempty"`
	InlineData       *blob             `json:"inlineData,omitempty"`
	FileData         *fileData         `json:"fileData,omitempty"`
	FunctionCall     *functionCall     `json:"functionCall,omitempty"`
	FunctionResponse *functionResponse `json:"functionResponse,omitempty"`
}

type blob struct {
	MIMEType string `json:"mimeType"`
	Data     string `json:"data"` // llm.Image.Base64: encoded once a turn
}

// fileData is an uploaded file, by its URI (upload.go).
type fileData struct {
	MIMEType string `json:"mimeType"`
	FileURI  string `json:"fileUri"`
}

type functionCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

type functionResponse struct {
	ID       string `json:"id,omitempty"`
	Name     string `json:"name"`
	Response struct {
		Output string `json:"output,omitempty"`
		Error  string `json:"error,omitempty"`
	} `json:"response"`
}

type toolSet struct {
	FunctionDeclarations []functionDeclaration `json:"functionDeclarations"`
}

// A functionDeclaration's parameters go as parametersJsonSchema, which
// takes JSON Schema as written (the older parameters field takes only
// Google's OpenAPI subset).
type functionDeclaration struct {
	Name                 string          `json:"name"`
	Description          string          `json:"description,omitempty"`
	ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema,omitempty"`
}

type toolConfig struct {
	FunctionCallingConfig functionCallingConfig `json:"functionCallingConfig"`
}

type functionCallingConfig struct {
	Mode                 string   `json:"mode"` // "ANY": a call to one of AllowedFunctionNames
	AllowedFunctionNames []string `json:"allowedFunctionNames,omitempty"`
}

type generationConfig struct {
	MaxOutputTokens    int             `json:"maxOutputTokens,omitempty"`
	ThinkingConfig     *thinkingConfig `json:"thinkingConfig,omitempty"`
	ResponseMIMEType   string          `json:"responseMimeType,omitempty"`
	ResponseJSONSchema json.RawMessage `json:"responseJsonSchema,omitempty"`
}

type thinkingConfig struct {
	IncludeThoughts bool   `json:"includeThoughts,omitempty"`
	ThinkingLevel   string `json:"thinkingLevel,omitempty"`
	ThinkingBudget  *int   `json:"thinkingBudget,omitempty"` // 0 turns thinking off
}

// Thinking budgets for the effort levels, on models that take a budget
// (Gemini 2.5: Pro 128–32768 tokens, Flash 0–24576, Flash-Lite 512–24576;
// https://ai.google.dev/gemini-api/docs/thinking#set-budget).
var budgets = map[string]int{
	llm.EffortMinimal: 512,
	llm.EffortLow:     1024,
	llm.EffortMedium:  8192,
	llm.EffortHigh:    24576,
	llm.EffortXHigh:   24576,
	llm.EffortMax:     24576,
}

// thinking is the thinkingConfig for effort, nil when none is sent. With
// thinking on, thought summaries are asked for (includeThoughts), to be
// streamed as thinking.
func (m *Model) thinking(effort string) *thinkingConfig {
	switch m.opts.Thinking {
	case ThinkingLevel:
		switch effort {
		case "":
			return &thinkingConfig{IncludeThoughts: true}
		case llm.EffortOff:
			// Gemini 3 cannot stop thinking; low is the least every one
			// of them takes.
			return &thinkingConfig{ThinkingLevel: llm.EffortLow}
		case llm.EffortMax:
			effort = llm.EffortXHigh
		}
		return &thinkingConfig{IncludeThoughts: true, ThinkingLevel: effort}
	case ThinkingBudget:
		switch effort {
		case "":
			return &thinkingConfig{IncludeThoughts: true}
		case llm.EffortOff:
			zero := 0
			return &thinkingConfig{ThinkingBudget: &zero}
		}
		b, ok := budgets[effort]
		if !ok {
			b = budgets[llm.EffortMedium]
		}
		return &thinkingConfig{IncludeThoughts: true, ThinkingBudget: &b}
	}
	return nil
}

// encodeWith builds the request body, with fileURI saying where an image
// was uploaded ("" sends it inline; nil uploads none). The system prompt
// is systemInstruction; consecutive messages of one role are merged into
// one content, so that the results of parallel calls go back together, in
// order. A reply goes back as its parts came, each with its thought
// signature (replay.go).
func (m *Model) encodeWith(req *llm.Request, fileURI func(llm.Image) string) ([]byte, error) {
	if fileURI == nil {
		fileURI = func(llm.Image) string { return "" }
	}
	r := request{Contents: make([]content, 0, len(req.Messages))}
	if req.System != "" {
		r.SystemInstruction = &content{Parts: []part{{Text: &req.System}}}
	}
	add := func(role string, parts ...part) {
		if len(parts) == 0 {
			return
		}
		if n := len(r.Contents); n > 0 && r.Contents[n-1].Role == role {
			r.Contents[n-1].Parts = append(r.Contents[n-1].Parts, parts...)
			return
		}
		r.Contents = append(r.Contents, content{Role: role, Parts: parts})
	}
	for i := range req.Messages {
		msg := &req.Messages[i]
		switch msg.Role {
		case llm.RoleAssistant:
			add("model", m.modelParts(msg)...)
		case llm.RoleTool:
			fr := &functionResponse{ID: sentID(msg.ToolCallID), Name: msg.ToolName}
			if fr.Name == "" {
				fr.Name = callName(req.Messages[:i], msg.ToolCallID)
			}
			if msg.IsError {
				fr.Response.Error = msg.Text
			} else {
				fr.Response.Output = msg.Text
			}
			add("user", part{FunctionResponse: fr})
		default:
			text := msg.Text
			if m.opts.NoVision {
				text = msg.TextWithStandIns()
			} else {
				for _, im := range msg.Images {
					if uri := fileURI(im); uri != "" {
						add("user", part{FileData: &fileData{MIMEType: im.MIMEType, FileURI: uri}})
					} else {
						add("user", part{InlineData: &blob{MIMEType: im.MIMEType, Data: im.Base64()}})
					}
				}
			}
			if text != "" {
				add("user", part{Text: &text})
			}
		}
	}
	if len(req.Tools) > 0 {
		decls := make([]functionDeclaration, 0, len(req.Tools))
		for _, t := range req.Tools {
			d := functionDeclaration{Name: t.Name, Description: t.Description}
			if len(bytes.TrimSpace(t.Schema)) > 0 {
				d.ParametersJSONSchema = t.Schema
			}
			decls = append(decls, d)
		}
		r.Tools = []toolSet{{FunctionDeclarations: decls}}
		if req.ToolChoice != "" {
			r.ToolConfig = &toolConfig{FunctionCallingConfig: functionCallingConfig{Mode: "ANY", AllowedFunctionNames: []string{req.ToolChoice}}}
		}
	}
	gc := generationConfig{MaxOutputTokens: m.opts.MaxTokens, ThinkingConfig: m.thinking(m.opts.EffortOf(req))}
	if req.Reply != nil {
		gc.ResponseMIMEType = "application/json"
		if len(bytes.TrimSpace(req.Reply.Schema)) > 0 {
			gc.ResponseJSONSchema = req.Reply.Schema
		}
	}
	if gc.MaxOutputTokens > 0 || gc.ThinkingConfig != nil || gc.ResponseMIMEType != "" {
		r.GenerationConfig = &gc
	}
	return json.Marshal(r)
}

// sentID is the id a call goes back with: none when Gemini gave it none.
func sentID(id string) string {
	if strings.HasPrefix(id, localIDPrefix) {
		return ""
	}
	return id
}

// callName is the name of the call id among msgs, for a tool result that
// does not say it.
func callName(msgs []llm.Message, id string) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		for _, tc := range msgs[i].ToolCalls {
			if tc.ID == id {
				return tc.Name
			}
		}
	}
	return ""
}

// args is a tool call's arguments as the API takes them: a JSON object.
// Arguments that are not one (cut at the cap, or broken) go back as {}.
func args(tc *llm.ToolCall) json.RawMessage {
	raw := bytes.TrimSpace(tc.Arguments)
	if tc.Dropped > 0 || len(raw) == 0 || raw[0] != '{' || !json.Valid(raw) {
		return json.RawMessage("{}")
	}
	return raw
}
