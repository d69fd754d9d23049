// Package geminitest is a fake Gemini API for tests:
// models.streamGenerateContent with alt=sse, streamed as the real one
// streams, and models.list, holding each request to the rules Google
// documents and answering a broken one with the API's error body
// ({"error": {"code", "message", "status"}}). Tests script what the model
// does (Turn); the fake signs what it sends as Gemini 3 does and records
// what it was sent.
//
// The rules it enforces, each with its source (rules.go keeps them as
// data: one named entry a rule, checked in order, the first broken
// answered and its name kept in Request.Rule):
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
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"

	"github.com/coda-acp/coda/engine/provider/internal/fakekit"
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
	Model           string // from the path
	URL             string
	Body            Body
	Raw             []byte
	fakekit.Verdict // why the rules refused it, if they did
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

	fakekit.Base[Request]
	received fakekit.Bytes
	files    fakekit.Files // by URI, the file's MIME type its MIMEType

	mu      sync.Mutex
	uploads map[string]upload // resumable uploads begun, by id
	begun   int               // uploads begun, to name them
	signed  map[string]string // signature → the model it was given by
	prompts map[string][]byte // the last prompt by model (cache.go)
}

// NewServer starts a fake; Close stops it.
func NewServer() *Server {
	s := &Server{signed: map[string]string{}, uploads: map[string]upload{}}
	s.URL = s.Start(s.serve) + "/v1beta"
	return s
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
	m := streamPath.FindStringSubmatch(r.URL.Path)
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/v1beta/models":
		s.list(w)
	case strings.HasPrefix(r.URL.Path, "/upload/"):
		s.upload(w, r)
	case m == nil || r.Method != http.MethodPost || r.URL.Query().Get("alt") != "sse":
		writeError(w, 404, "NOT_FOUND", "unknown path "+r.URL.String())
	default:
		s.generate(w, r, m[1])
	}
}

// generate serves streamGenerateContent: the request held to the rules,
// then the scripted turn streamed.
func (s *Server) generate(w http.ResponseWriter, r *http.Request, model string) {
	raw, _ := io.ReadAll(r.Body)
	s.received.Add(len(raw))
	req := &Request{Model: model, URL: r.URL.String(), Raw: raw}
	s.Log.Add(req)
	c := s.call(req)
	if ref := fakekit.Judge(&s.Log, req, rules, c); ref != nil {
		status := ref.Type
		if status == "" {
			status = "INVALID_ARGUMENT"
		}
		writeError(w, ref.Status, status, ref.Msg)
		return
	}
	n := s.Log.Serve()
	t := Turn{Text: "OK."}
	if s.Reply != nil {
		t = s.Reply(n, req)
	}
	t.Usage = s.credit(req, t.Usage)
	if t.Status != 0 {
		fakekit.WriteRaw(w, t.Status, "application/json; charset=UTF-8", t.Body)
		return
	}
	s.stream(w, r, req, c.model, t)
}

func writeError(w http.ResponseWriter, code int, status, msg string) {
	fakekit.GoogleError(w, code, status, msg)
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
	fakekit.WriteJSON(w, 200, "application/json", map[string]any{"models": models})
}
