package gemini

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"sync"
	"testing"
)

// fakeServer is a Gemini API that holds each request to what Google's docs
// say one must be, and refuses one that is not with a 400 shaped as the
// API's ({"error": {"code", "message", "status"}}):
//
//   - the key goes in x-goog-api-key, never in the URL; the path is
//     /v1beta/models/MODEL:streamGenerateContent?alt=sse
//     (https://ai.google.dev/api/generate-content#method:-models.streamgeneratecontent);
//   - roles are "user" and "model", and no content is empty;
//   - a turn of function responses answers every call of the model's turn
//     before it (https://ai.google.dev/gemini-api/docs/function-calling);
//   - on a model that validates thought signatures (Gemini 3), the first
//     function call of each model step of the current turn carries the
//     signature this server gave it, for this model, or the documented
//     skip value (https://ai.google.dev/gemini-api/docs/thought-signatures):
//     a missing one is "Function call is missing a thought_signature",
//     another's is "Corrupted thought signature";
//   - thinkingLevel and thinkingBudget are not sent together, a model takes
//     only its own kind and levels, and a budget of 0 only where thinking
//     can be turned off (https://ai.google.dev/gemini-api/docs/thinking);
//   - responseJsonSchema needs responseMimeType application/json
//     (https://ai.google.dev/gemini-api/docs/structured-output);
//   - allowedFunctionNames needs mode ANY and names declared functions.
type fakeServer struct {
	*httptest.Server
	key    string
	models map[string]fakeModel

	mu       sync.Mutex
	signed   map[string]string // signature → the model it was given by
	bodies   []wireRequest
	raw      [][]byte
	replies  []fakeReply
	refusals []string
}

// A fakeModel is what the fake knows of a model.
type fakeModel struct {
	levels  []string // thinkingLevel values it takes; nil: it takes a budget
	noOff   bool     // a budget of 0 is refused
	signs   bool     // it validates thought signatures (Gemini 3)
	version string
}

var fakeModels = map[string]fakeModel{
	"gemini-3-pro-preview":   {levels: []string{"low", "high"}, signs: true},
	"gemini-3-flash-preview": {levels: []string{"minimal", "low", "medium", "high"}, signs: true},
	"gemini-3.8-flash":       {levels: []string{"low", "medium", "high"}, signs: true},
	"gemini-2.5-pro":         {noOff: true},
	"gemini-2.5-flash":       {},
}

// A fakeReply writes the SSE body for one request; sign gives a new
// signature from the model the request named.
type fakeReply func(req *wireRequest, sign func() string) string

// wireRequest is a request as the fake reads it.
type wireRequest struct {
	Model             string
	Contents          []wireContent `json:"contents"`
	SystemInstruction *wireContent  `json:"systemInstruction"`
	Tools             []struct {
		FunctionDeclarations []struct {
			Name                 string          `json:"name"`
			Description          string          `json:"description"`
			ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema"`
			Parameters           json.RawMessage `json:"parameters"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
	ToolConfig *struct {
		FunctionCallingConfig struct {
			Mode                 string   `json:"mode"`
			AllowedFunctionNames []string `json:"allowedFunctionNames"`
		} `json:"functionCallingConfig"`
	} `json:"toolConfig"`
	GenerationConfig *struct {
		MaxOutputTokens int `json:"maxOutputTokens"`
		ThinkingConfig  *struct {
			IncludeThoughts bool   `json:"includeThoughts"`
			ThinkingLevel   string `json:"thinkingLevel"`
			ThinkingBudget  *int   `json:"thinkingBudget"`
		} `json:"thinkingConfig"`
		ResponseMIMEType   string          `json:"responseMimeType"`
		ResponseJSONSchema json.RawMessage `json:"responseJsonSchema"`
	} `json:"generationConfig"`
}

type wireContent struct {
	Role  string     `json:"role"`
	Parts []wirePart `json:"parts"`
}

type wirePart struct {
	Text             *string `json:"text"`
	Thought          bool    `json:"thought"`
	ThoughtSignature string  `json:"thoughtSignature"`
	InlineData       *struct {
		MIMEType string `json:"mimeType"`
		Data     string `json:"data"`
	} `json:"inlineData"`
	FunctionCall *struct {
		ID   string          `json:"id"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"functionCall"`
	FunctionResponse *struct {
		ID       string          `json:"id"`
		Name     string          `json:"name"`
		Response json.RawMessage `json:"response"`
	} `json:"functionResponse"`
}

var fakePath = regexp.MustCompile(`^/v1beta/models/([^/:]+):streamGenerateContent$`)

func newFake(t *testing.T, key string, replies ...fakeReply) *fakeServer {
	t.Helper()
	f := &fakeServer{key: key, models: fakeModels, signed: map[string]string{}, replies: replies}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeServer) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	refuse := func(code int, status, msg string) {
		f.mu.Lock()
		f.refusals = append(f.refusals, msg)
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		w.WriteHeader(code)
		b, _ := json.Marshal(map[string]any{"error": map[string]any{"code": code, "message": msg, "status": status}})
		w.Write(b)
	}
	if r.URL.Query().Has("key") {
		refuse(400, "INVALID_ARGUMENT", "the key must not be in the URL (this fake's rule: coda sends it as x-goog-api-key)")
		return
	}
	if r.Header.Get("X-Goog-Api-Key") != f.key {
		refuse(400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.")
		return
	}
	m := fakePath.FindStringSubmatch(r.URL.Path)
	if m == nil || r.Method != http.MethodPost || r.URL.Query().Get("alt") != "sse" {
		refuse(404, "NOT_FOUND", "unknown path "+r.URL.String())
		return
	}
	model, ok := f.models[m[1]]
	if !ok {
		refuse(404, "NOT_FOUND", fmt.Sprintf("models/%s is not found for API version v1beta, or is not supported for generateContent. Call ListModels to see the list of available models and their supported methods.", m[1]))
		return
	}
	var req wireRequest
	if err := json.Unmarshal(raw, &req); err != nil {
		refuse(400, "INVALID_ARGUMENT", "Invalid JSON payload received. "+err.Error())
		return
	}
	req.Model = m[1]
	f.mu.Lock()
	f.bodies = append(f.bodies, req)
	f.raw = append(f.raw, raw)
	f.mu.Unlock()
	if msg := f.check(&req, model); msg != "" {
		refuse(400, "INVALID_ARGUMENT", msg)
		return
	}
	f.mu.Lock()
	var reply fakeReply
	if len(f.replies) > 0 {
		reply = f.replies[0]
		if len(f.replies) > 1 {
			f.replies = f.replies[1:]
		}
	}
	f.mu.Unlock()
	sign := func() string {
		var b [24]byte
		f.mu.Lock()
		defer f.mu.Unlock()
		copy(b[:], fmt.Sprintf("%s#%d", req.Model, len(f.signed)))
		s := base64.StdEncoding.EncodeToString(b[:])
		f.signed[s] = req.Model
		return s
	}
	w.Header().Set("Content-Type", "text/event-stream")
	io.WriteString(w, reply(&req, sign))
}

// check returns why the API would refuse req, or "".
func (f *fakeServer) check(req *wireRequest, model fakeModel) string {
	declared := map[string]bool{}
	for _, ts := range req.Tools {
		for _, d := range ts.FunctionDeclarations {
			if len(d.ParametersJSONSchema) > 0 && len(d.Parameters) > 0 {
				return "parameters and parameters_json_schema cannot both be set"
			}
			declared[d.Name] = true
		}
	}
	if tc := req.ToolConfig; tc != nil {
		fc := tc.FunctionCallingConfig
		if len(fc.AllowedFunctionNames) > 0 && fc.Mode != "ANY" {
			return "allowed_function_names may only be set when mode is ANY"
		}
		for _, n := range fc.AllowedFunctionNames {
			if !declared[n] {
				return fmt.Sprintf("allowed_function_names: %s is not a declared function", n)
			}
		}
	}
	if gc := req.GenerationConfig; gc != nil {
		if len(gc.ResponseJSONSchema) > 0 && gc.ResponseMIMEType != "application/json" {
			return "response_json_schema requires response_mime_type to be application/json"
		}
		if tc := gc.ThinkingConfig; tc != nil {
			switch {
			case tc.ThinkingLevel != "" && tc.ThinkingBudget != nil:
				return "thinking_budget and thinking_level are not supported together"
			case tc.ThinkingLevel != "" && model.levels == nil:
				return "thinking_level is not supported by this model"
			case tc.ThinkingLevel != "" && !slices.Contains(model.levels, tc.ThinkingLevel):
				return fmt.Sprintf("thinking_level %q is not supported by this model", tc.ThinkingLevel)
			case tc.ThinkingBudget != nil && *tc.ThinkingBudget == 0 && (model.noOff || model.levels != nil):
				return "Budget 0 is invalid. This model only works in thinking mode."
			}
		}
	}
	// The current turn starts at the last user content that is not only
	// function responses.
	current := 0
	for i, c := range req.Contents {
		if c.Role != "user" && c.Role != "model" {
			return fmt.Sprintf("Please use a valid role: user, model. (contents[%d].role %q)", i, c.Role)
		}
		if len(c.Parts) == 0 {
			return fmt.Sprintf("contents[%d].parts: must not be empty", i)
		}
		if c.Role == "user" && slices.ContainsFunc(c.Parts, func(p wirePart) bool { return p.FunctionResponse == nil }) {
			current = i
		}
	}
	for i, c := range req.Contents {
		calls := 0
		for _, p := range c.Parts {
			if p.FunctionCall != nil {
				calls++
			}
		}
		if calls > 0 {
			if i+1 < len(req.Contents) {
				responses := 0
				for _, p := range req.Contents[i+1].Parts {
					if p.FunctionResponse != nil {
						responses++
					}
				}
				if responses != calls {
					return "Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn."
				}
			}
			if model.signs && i >= current {
				first := c.Parts[slices.IndexFunc(c.Parts, func(p wirePart) bool { return p.FunctionCall != nil })]
				switch sig := first.ThoughtSignature; {
				case sig == "":
					return fmt.Sprintf("Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:%s` , position %d. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.", first.FunctionCall.Name, i+1)
				case sig == skipSignature:
				default:
					f.mu.Lock()
					by := f.signed[sig]
					f.mu.Unlock()
					if by != req.Model {
						return "Corrupted thought signature."
					}
				}
			}
		}
	}
	return ""
}

func (f *fakeServer) requests() []wireRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.bodies)
}

// sseChunk is one SSE event of the given candidate parts, with a finish
// reason ("" for none) and usage (nil for none).
func sseChunk(parts []map[string]any, finish string, usage map[string]any) string {
	cand := map[string]any{"index": 0}
	if parts != nil {
		cand["content"] = map[string]any{"role": "model", "parts": parts}
	}
	if finish != "" {
		cand["finishReason"] = finish
	}
	ev := map[string]any{"candidates": []any{cand}, "modelVersion": "fake"}
	if usage != nil {
		ev["usageMetadata"] = usage
	}
	b, _ := json.Marshal(ev)
	return "data: " + string(b) + "\r\n\r\n"
}

func textReply(text string) fakeReply {
	return func(req *wireRequest, sign func() string) string {
		return sseChunk([]map[string]any{{"text": text}}, "", nil) +
			sseChunk([]map[string]any{{"text": "", "thoughtSignature": sign()}}, "STOP", map[string]any{"promptTokenCount": 10, "candidatesTokenCount": 3})
	}
}
