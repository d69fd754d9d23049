// Package geminitest is a fake Gemini API for tests:
// models.streamGenerateContent with alt=sse, streamed as the real one
// streams, and models.list, holding each request to the rules Google
// documents and answering a broken one with the API's error body
// ({"error": {"code", "message", "status"}}). Tests script what the model
// does (Turn); the fake signs what it sends as Gemini 3 does and records
// what it was sent.
//
// The rules it enforces, each with its source:
//
//   - the key goes in x-goog-api-key, never in the URL (a wrong one is
//     Google's "API key not valid" 400); the path is
//     /v1beta/models/MODEL:streamGenerateContent?alt=sse
//     (https://ai.google.dev/api/generate-content#method:-models.streamgeneratecontent);
//   - roles are "user" and "model", and no content is empty;
//   - a turn of function responses answers every call of the model's turn
//     before it (https://ai.google.dev/gemini-api/docs/function-calling);
//   - on a model that validates thought signatures (Gemini 3 and later),
//     the first function call of each model step of the current turn
//     carries the signature this server gave it, for this model, or the
//     documented skip value
//     (https://ai.google.dev/gemini-api/docs/thought-signatures): a
//     missing one is "Function call is missing a thought_signature",
//     another model's is "Corrupted thought signature";
//   - thinkingLevel and thinkingBudget are not sent together, a model takes
//     only its own kind and levels, and a budget of 0 only where thinking
//     can stop (https://ai.google.dev/gemini-api/docs/thinking);
//   - responseJsonSchema needs responseMimeType application/json
//     (https://ai.google.dev/gemini-api/docs/structured-output);
//   - allowedFunctionNames needs mode ANY and names declared functions;
//   - a model marked NoJSONWithTools (Gemini 2.x) refuses a JSON reply
//     together with function declarations ("Function calling with a
//     response mime type: 'application/json' is unsupported", as
//     symfony/ai#803 quotes it): structured outputs with tools are Gemini
//     3's (https://ai.google.dev/gemini-api/docs/structured-output#structured_outputs_with_tools);
//   - a request is at most 20 MB: larger media go through the Files API
//     (https://ai.google.dev/gemini-api/docs/files), whose resumable upload
//     this fake serves: a start request (X-Goog-Upload-Protocol: resumable,
//     X-Goog-Upload-Command: start, the file's size and type in
//     X-Goog-Upload-Header-Content-Length and -Type) answered with
//     X-Goog-Upload-URL, then the bytes to it (X-Goog-Upload-Command:
//     "upload, finalize", X-Goog-Upload-Offset: 0), exactly as many as
//     declared; a fileData part names an uploaded file's URI, with its type.
//
// It signs as Gemini 3 does: the first function call of a reply carries a
// signature, and a reply without calls ends with an empty text part
// carrying one.
package geminitest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// A Turn is what the fake model does on one call.
type Turn struct {
	Thought string // a thought summary (thought: true), streamed a word at a time
	Text    string // streamed a word at a time
	Calls   []Call
	// Finish is the finishReason; "" is STOP.
	Finish string
	// Blocked blocks the prompt (promptFeedback.blockReason) instead.
	Blocked string
	Usage   Usage

	// Hold streams the first piece, then waits until the client goes
	// away: a reply that never ends, for cancellation.
	Hold bool

	// Status, when set, answers with this HTTP status and Body instead.
	Status int
	Body   string
}

// A Call is one function call of a Turn; Args is its arguments' JSON.
type Call struct {
	Name, Args string
}

// Usage is a Turn's usageMetadata.
type Usage struct {
	Prompt, Cached, Candidates, Thoughts int
}

// A Model is what the fake knows of a model.
type Model struct {
	Levels []string // thinkingLevel values it takes; nil: it takes a budget
	NoOff  bool     // a budget of 0 is refused
	Signs  bool     // it validates thought signatures (Gemini 3 and later)
	// NoJSONWithTools: a JSON reply (responseMimeType application/json)
	// is refused beside function declarations, as Gemini 2.x does.
	NoJSONWithTools bool
}

// Models are the models the fake knows, from
// https://ai.google.dev/gemini-api/docs/thinking and each model's page.
var Models = map[string]Model{
	"gemini-4-hydrogen":      {Levels: []string{"low", "medium", "high", "xhigh"}, Signs: true},
	"gemini-3-pro-preview":   {Levels: []string{"low", "high"}, Signs: true},
	"gemini-3-flash-preview": {Levels: []string{"minimal", "low", "medium", "high"}, Signs: true},
	"gemini-3.8-flash":       {Levels: []string{"low", "medium", "high"}, Signs: true},
	"gemini-2.5-pro":         {NoOff: true, NoJSONWithTools: true},
	"gemini-2.5-flash":       {NoJSONWithTools: true},
}

// A Request is one call the server received.
type Request struct {
	Model string // from the path
	URL   string
	Body  Body
	Raw   []byte
	// Refused is the error message the server answered with, when a rule
	// refused the request; "" when it was served.
	Refused string
	// Cached is the prompt tokens credited as read from the cache
	// (cache.go).
	Cached int
}

// Body is a request's body, as much of it as the fake reads.
type Body struct {
	Contents          []Content `json:"contents"`
	SystemInstruction *Content  `json:"systemInstruction"`
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

// A Content is one content of a request.
type Content struct {
	Role  string `json:"role"`
	Parts []Part `json:"parts"`
}

// A Part is one part of a content.
type Part struct {
	Text             *string `json:"text"`
	Thought          bool    `json:"thought"`
	ThoughtSignature string  `json:"thoughtSignature"`
	InlineData       *struct {
		MIMEType string `json:"mimeType"`
		Data     string `json:"data"`
	} `json:"inlineData"`
	FileData *struct {
		MIMEType string `json:"mimeType"`
		FileURI  string `json:"fileUri"`
	} `json:"fileData"`
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

// SkipSignature is the value Google's doc gives for a function call
// Gemini did not write: the API does not validate it.
const SkipSignature = "skip_thought_signature_validator"

// A ListedModel is one entry of models.list.
type ListedModel struct {
	ID              string
	InputTokenLimit int
	Methods         []string // supportedGenerationMethods; nil is generateContent
}

// A Server is a fake Gemini API; its URL is the base ending in /v1beta.
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
	// Listed is what models.list lists.
	Listed []ListedModel
	// Cache credits implicitly cached prompt tokens as Gemini does
	// (cache.go).
	Cache bool

	srv       *httptest.Server
	mu        sync.Mutex
	received  int64 // bytes of request bodies, uploads included
	uploads   map[string]upload
	begun     int               // uploads begun, to name them
	files     map[string]string // an uploaded file's URI → its MIME type
	requests  []*Request
	served    int
	cancelled int
	signed    map[string]string // signature → the model it was given by
	prompts   map[string][]byte // the last prompt by model (cache.go)
}

// NewServer starts a fake; Close stops it.
func NewServer() *Server {
	s := &Server{signed: map[string]string{}, uploads: map[string]upload{}, files: map[string]string{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL + "/v1beta"
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

var streamPath = regexp.MustCompile(`^/v1beta/models/([^/:]+):streamGenerateContent$`)

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Query().Has("key") {
		writeError(w, 400, "INVALID_ARGUMENT", "the key must not be in the URL (this fake's rule: coda sends it as x-goog-api-key)")
		return
	}
	if s.Key != "" && r.Header.Get("X-Goog-Api-Key") != s.Key {
		writeError(w, 400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.")
		return
	}
	if r.Method == http.MethodGet && r.URL.Path == "/v1beta/models" {
		s.list(w)
		return
	}
	if strings.HasPrefix(r.URL.Path, "/upload/") {
		s.upload(w, r)
		return
	}
	m := streamPath.FindStringSubmatch(r.URL.Path)
	if m == nil || r.Method != http.MethodPost || r.URL.Query().Get("alt") != "sse" {
		writeError(w, 404, "NOT_FOUND", "unknown path "+r.URL.String())
		return
	}
	raw, _ := io.ReadAll(r.Body)
	req := &Request{Model: m[1], URL: r.URL.String(), Raw: raw}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	s.received += int64(len(raw))
	s.mu.Unlock()
	if len(raw) > maxRequest {
		s.refuse(w, req, 400, "INVALID_ARGUMENT", fmt.Sprintf("Request payload size exceeds the limit: %d bytes.", maxRequest))
		return
	}
	models := s.Models
	if models == nil {
		models = Models
	}
	model, ok := models[req.Model]
	if !ok {
		s.refuse(w, req, 404, "NOT_FOUND", fmt.Sprintf("models/%s is not found for API version v1beta, or is not supported for generateContent. Call ListModels to see the list of available models and their supported methods.", req.Model))
		return
	}
	if err := json.Unmarshal(raw, &req.Body); err != nil {
		s.refuse(w, req, 400, "INVALID_ARGUMENT", "Invalid JSON payload received. "+err.Error())
		return
	}
	if msg := s.check(req, model); msg != "" {
		s.refuse(w, req, 400, "INVALID_ARGUMENT", msg)
		return
	}
	s.mu.Lock()
	n := s.served
	s.served++
	s.mu.Unlock()
	t := Turn{Text: "OK."}
	if s.Reply != nil {
		t = s.Reply(n, req)
	}
	t.Usage = s.credit(req, t.Usage)
	if t.Status != 0 {
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		w.WriteHeader(t.Status)
		io.WriteString(w, t.Body)
		return
	}
	s.stream(w, r, req, model, t)
}

func (s *Server) refuse(w http.ResponseWriter, req *Request, code int, status, msg string) {
	s.mu.Lock()
	req.Refused = msg
	s.mu.Unlock()
	writeError(w, code, status, msg)
}

func writeError(w http.ResponseWriter, code int, status, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": code, "message": msg, "status": status}})
}

func (s *Server) list(w http.ResponseWriter) {
	models := []map[string]any{}
	for _, m := range s.Listed {
		methods := m.Methods
		if methods == nil {
			methods = []string{"generateContent", "countTokens"}
		}
		models = append(models, map[string]any{"name": "models/" + m.ID, "inputTokenLimit": m.InputTokenLimit, "supportedGenerationMethods": methods})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"models": models})
}

// check returns why the API would refuse req, or "".
func (s *Server) check(req *Request, model Model) string {
	b := &req.Body
	for _, c := range b.Contents {
		for _, p := range c.Parts {
			if fd := p.FileData; fd != nil {
				s.mu.Lock()
				mime, ok := s.files[fd.FileURI]
				s.mu.Unlock()
				switch {
				case !ok:
					return fmt.Sprintf("File %s not exist in the Gemini API.", fd.FileURI)
				case fd.MIMEType != mime:
					return fmt.Sprintf("fileData mimeType %s is not the file's %s (this fake's rule)", fd.MIMEType, mime)
				}
			}
		}
	}
	declared := map[string]bool{}
	for _, ts := range b.Tools {
		for _, d := range ts.FunctionDeclarations {
			if len(d.ParametersJSONSchema) > 0 && len(d.Parameters) > 0 {
				return "parameters and parameters_json_schema cannot both be set"
			}
			declared[d.Name] = true
		}
	}
	if tc := b.ToolConfig; tc != nil {
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
	if gc := b.GenerationConfig; gc != nil {
		if len(gc.ResponseJSONSchema) > 0 && gc.ResponseMIMEType != "application/json" {
			return "response_json_schema requires response_mime_type to be application/json"
		}
		if model.NoJSONWithTools && gc.ResponseMIMEType == "application/json" && len(declared) > 0 {
			return "Function calling with a response mime type: 'application/json' is unsupported"
		}
		if tc := gc.ThinkingConfig; tc != nil {
			switch {
			case tc.ThinkingLevel != "" && tc.ThinkingBudget != nil:
				return "thinking_budget and thinking_level are not supported together"
			case tc.ThinkingLevel != "" && model.Levels == nil:
				return "thinking_level is not supported by this model"
			case tc.ThinkingLevel != "" && !slices.Contains(model.Levels, tc.ThinkingLevel):
				return fmt.Sprintf("thinking_level %q is not supported by this model", tc.ThinkingLevel)
			case tc.ThinkingBudget != nil && *tc.ThinkingBudget == 0 && (model.NoOff || model.Levels != nil):
				return "Budget 0 is invalid. This model only works in thinking mode."
			}
		}
	}
	// The current turn starts at the last user content that is not only
	// function responses.
	current := 0
	for i, c := range b.Contents {
		if c.Role != "user" && c.Role != "model" {
			return fmt.Sprintf("Please use a valid role: user, model. (contents[%d].role %q)", i, c.Role)
		}
		if len(c.Parts) == 0 {
			return fmt.Sprintf("contents[%d].parts: must not be empty", i)
		}
		if c.Role == "user" && slices.ContainsFunc(c.Parts, func(p Part) bool { return p.FunctionResponse == nil }) {
			current = i
		}
	}
	for i, c := range b.Contents {
		calls := 0
		for _, p := range c.Parts {
			if p.FunctionCall != nil {
				calls++
			}
		}
		if calls == 0 {
			continue
		}
		if i+1 < len(b.Contents) {
			responses := 0
			for _, p := range b.Contents[i+1].Parts {
				if p.FunctionResponse != nil {
					responses++
				}
			}
			if responses != calls {
				return "Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn."
			}
		}
		if model.Signs && i >= current {
			first := c.Parts[slices.IndexFunc(c.Parts, func(p Part) bool { return p.FunctionCall != nil })]
			switch sig := first.ThoughtSignature; {
			case sig == "":
				return fmt.Sprintf("Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:%s` , position %d. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.", first.FunctionCall.Name, i+1)
			case sig == SkipSignature:
			default:
				s.mu.Lock()
				by := s.signed[sig]
				s.mu.Unlock()
				if by != req.Model {
					return "Corrupted thought signature."
				}
			}
		}
	}
	return ""
}

// sign gives a new signature from model.
func (s *Server) sign(model string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b [24]byte
	copy(b[:], fmt.Sprintf("%s#%d", model, len(s.signed)))
	sig := base64.StdEncoding.EncodeToString(b[:])
	s.signed[sig] = model
	return sig
}

// stream writes t as the API streams a reply: one chunk a word, the
// usage so far on each, the finish on the last.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, req *Request, model Model, t Turn) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	u := t.Usage
	if u == (Usage{}) {
		u = Usage{Prompt: len(req.Raw) / 4, Candidates: 10}
	}
	usage := map[string]any{"promptTokenCount": u.Prompt, "candidatesTokenCount": u.Candidates, "totalTokenCount": u.Prompt + u.Candidates + u.Thoughts}
	if u.Cached > 0 {
		usage["cachedContentTokenCount"] = u.Cached
	}
	if u.Thoughts > 0 {
		usage["thoughtsTokenCount"] = u.Thoughts
	}
	held := false
	chunk := func(parts []map[string]any, finish string) {
		cand := map[string]any{"index": 0}
		if parts != nil {
			cand["content"] = map[string]any{"role": "model", "parts": parts}
		}
		if finish != "" {
			cand["finishReason"] = finish
		}
		b, _ := json.Marshal(map[string]any{"candidates": []any{cand}, "usageMetadata": usage, "modelVersion": req.Model, "responseId": "fake"})
		fmt.Fprintf(w, "data: %s\r\n\r\n", b)
		w.(http.Flusher).Flush()
		if t.Hold && !held {
			held = true
			<-r.Context().Done()
			s.mu.Lock()
			s.cancelled++
			s.mu.Unlock()
		}
	}
	if t.Blocked != "" {
		b, _ := json.Marshal(map[string]any{"promptFeedback": map[string]any{"blockReason": t.Blocked}, "usageMetadata": usage})
		fmt.Fprintf(w, "data: %s\r\n\r\n", b)
		return
	}
	for _, piece := range words(t.Thought) {
		if chunk([]map[string]any{{"text": piece, "thought": true}}, ""); held {
			return
		}
	}
	for _, piece := range words(t.Text) {
		if chunk([]map[string]any{{"text": piece}}, ""); held {
			return
		}
	}
	finish := t.Finish
	if finish == "" {
		finish = "STOP"
	}
	if len(t.Calls) > 0 {
		var parts []map[string]any
		for i, c := range t.Calls {
			args := json.RawMessage(c.Args)
			if c.Args == "" {
				args = json.RawMessage("{}")
			}
			p := map[string]any{"functionCall": map[string]any{"name": c.Name, "args": args}}
			if i == 0 && model.Signs {
				p["thoughtSignature"] = s.sign(req.Model)
			}
			parts = append(parts, p)
		}
		chunk(parts, finish)
		return
	}
	var last []map[string]any
	if model.Signs {
		last = []map[string]any{{"text": "", "thoughtSignature": s.sign(req.Model)}}
	}
	chunk(last, finish)
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

// maxRequest is the most a generateContent request may be (20 MB).
const maxRequest = 20 << 20

// An upload is a resumable upload begun: the size and type declared.
type upload struct {
	size int
	mime string
}

// Received is how many bytes of request bodies the server was sent,
// uploads included.
func (s *Server) Received() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.received
}

// Uploaded counts the files uploaded.
func (s *Server) Uploaded() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.files)
}

// upload serves the Files API's resumable upload: its start, then its
// bytes.
func (s *Server) upload(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.received += int64(len(raw))
	s.mu.Unlock()
	if r.Method != http.MethodPost {
		writeError(w, 404, "NOT_FOUND", "unknown path "+r.URL.String())
		return
	}
	if r.URL.Path == "/upload/v1beta/files" {
		size, err := strconv.Atoi(r.Header.Get("X-Goog-Upload-Header-Content-Length"))
		mime := r.Header.Get("X-Goog-Upload-Header-Content-Type")
		switch {
		case r.Header.Get("X-Goog-Upload-Protocol") != "resumable" || r.Header.Get("X-Goog-Upload-Command") != "start":
			writeError(w, 400, "INVALID_ARGUMENT", "an upload starts with X-Goog-Upload-Protocol: resumable and X-Goog-Upload-Command: start")
		case err != nil || size <= 0 || size > 2<<30 || mime == "":
			writeError(w, 400, "INVALID_ARGUMENT", "X-Goog-Upload-Header-Content-Length and -Type must give the file's size (at most 2 GB) and type")
		case !json.Valid(raw):
			writeError(w, 400, "INVALID_ARGUMENT", "Invalid JSON payload received.")
		default:
			s.mu.Lock()
			s.begun++
			id := fmt.Sprintf("u%d", s.begun)
			s.uploads[id] = upload{size, mime}
			s.mu.Unlock()
			w.Header().Set("X-Goog-Upload-URL", s.srv.URL+"/upload/session/"+id)
			w.Header().Set("X-Goog-Upload-Status", "active")
			w.WriteHeader(http.StatusOK)
		}
		return
	}
	id, ok := strings.CutPrefix(r.URL.Path, "/upload/session/")
	s.mu.Lock()
	up, known := s.uploads[id]
	s.mu.Unlock()
	switch {
	case !ok || !known:
		writeError(w, 404, "NOT_FOUND", "no such upload")
	case r.Header.Get("X-Goog-Upload-Command") != "upload, finalize" || r.Header.Get("X-Goog-Upload-Offset") != "0":
		writeError(w, 400, "INVALID_ARGUMENT", `the bytes go with X-Goog-Upload-Command: "upload, finalize" and X-Goog-Upload-Offset: 0`)
	case len(raw) != up.size:
		writeError(w, 400, "INVALID_ARGUMENT", fmt.Sprintf("the upload declared %d bytes and sent %d", up.size, len(raw)))
	default:
		name := "files/" + id
		uri := s.URL + "/" + name
		s.mu.Lock()
		s.files[uri] = up.mime
		delete(s.uploads, id)
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		json.NewEncoder(w).Encode(map[string]any{"file": map[string]any{
			"name": name, "mimeType": up.mime, "sizeBytes": strconv.Itoa(up.size), "uri": uri, "state": "ACTIVE",
		}})
	}
}
