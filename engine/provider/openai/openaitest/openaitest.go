// Package openaitest is a fake OpenAI API for tests: chat completions,
// the Responses API and the model list, streamed as the real ones stream,
// and holding each request to the rules OpenAI documents, answered with
// the error bodies OpenAI sends when one is broken. Tests script what the
// model does (Turn); the fake records what it was sent.
//
// The rules it enforces, each with its source:
//
// Chat completions (platform.openai.com/docs/api-reference/chat):
//   - reasoning_effort is for reasoning models ("o-series and gpt-5
//     models only" in the API reference): OpenAI's models that do not
//     reason refuse it ("Unsupported parameter: 'reasoning_effort' is not
//     supported with this model."), "none" included.
//   - GPT-5.4 and later take function tools only with reasoning_effort
//     "none", and default to another: "Function tools with reasoning_effort
//     are not supported for gpt-5.4 in /v1/chat/completions"
//     (openai/openai-openapi#541, developers.openai.com/api/docs/guides/reasoning).
//   - a tool message answers an assistant tool call before it, and every
//     tool call is answered ("messages with role 'tool' must be a response
//     to a preceeding message with 'tool_calls'").
//   - json_object needs the word "json" in the messages; a strict schema
//     (response_format or a strict function) has every object closed
//     (additionalProperties false) and every property required
//     (platform.openai.com/docs/guides/structured-outputs, "Supported
//     schemas"); a named tool_choice names an offered function.
//   - a reasoning model takes temperature and top_p only with
//     reasoning_effort "none", as on the Responses API
//     ("Unsupported parameter: 'temperature' is not supported with this
//     model.", developers.openai.com/api/docs/guides/reasoning).
//   - with Gemini set, as Gemini's OpenAI endpoint does
//     (ai.google.dev/gemini-api/docs/thought-signatures): each tool call
//     carries a thought signature in extra_content, and a call sent back
//     without the signature it came with is refused.
//
// Responses (platform.openai.com/docs/api-reference/responses,
// developers.openai.com/api/docs/guides/reasoning#keeping-reasoning-items-in-context):
//   - stateless only (store false): a reasoning item sent back must carry
//     the encrypted_content it came with ("Item with id 'rs_…' not found.
//     Items are not persisted when `store` is set to false"), which comes
//     only when include names reasoning.encrypted_content, to the model
//     that wrote it (another answers "The encrypted content for item rs_…
//     could not be verified", as users of gateways report:
//     Wei-Shaw/sub2api#3138, anomalyco/opencode#5104);
//   - a reasoning item goes back with the item it was produced with, and
//     that item with it ("Item 'fc_…' of type 'function_call' was provided
//     without its required 'reasoning' item", "… of type 'reasoning' was
//     provided without its required following item");
//   - a function_call_output answers a function_call in the input, and
//     each function_call is answered;
//   - a function tool is strict unless it says strict: false ("Default
//     true", the API reference's FunctionTool), and a strict schema must
//     fit strict mode; json_object needs "json" in the input;
//   - a model that does not reason refuses reasoning parameters;
//   - an input_image carries an image_url or a file_id, not both; a
//     file_id names a file uploaded to this server and not deleted.
//
// Files (platform.openai.com/docs/api-reference/files/create, …/delete),
// unless NoFiles, which answers them 404 as a server without them does:
//   - POST /files takes multipart/form-data: the file, and its purpose,
//     one of assistants, batch, fine-tune, vision, user_data, evals; an
//     expires_after given has anchor created_at and seconds from 3600 to
//     2592000 (the form's fields expires_after[anchor] and
//     expires_after[seconds]). It answers the file object (id, object
//     "file", bytes, created_at, expires_at, filename, purpose).
//   - DELETE /files/{file_id} answers {id, object "file", deleted true};
//     an unknown id is a 404.
//   - the fake counts uploads, deletions and every request body's bytes
//     (Uploads, Deletes, Received); an upload is read as it streams, not
//     kept.
//
// The servers' own constrained-reply fields, on chat completions:
//   - vLLM's structured_outputs holds exactly one kind of constraint
//     (json, regex, choice, grammar, json_object, structural_tag: "You
//     can only use one kind of structured outputs constraint", vLLM's
//     sampling_params.py; https://docs.vllm.ai/en/latest/features/structured_outputs/);
//     with NoResponseFormat it refuses a schema as its xgrammar backend
//     does ("The provided JSON schema contains features not supported by
//     xgrammar.").
//   - llama.cpp's json_schema and grammar are not sent together ("Cannot
//     use both json_schema and grammar"), nor grammar with tools ("Cannot
//     specify grammar with tools"), as its server's source says
//     (tools/server, common/chat.cpp; its README's /completion options);
//     with NoResponseFormat it refuses a schema as its converter does
//     ("JSON schema conversion failed").
//   - OpenAI itself knows neither: "Unrecognized request argument
//     supplied: structured_outputs".
//
// A compatible server that lacks a mechanism of the answer's shape
// (NoStrict, NoToolChoice, NoResponseFormat) refuses a request that uses
// it with the 400 such servers send: Gemini's OpenAI endpoint's "Unknown
// name \"strict\"" for the field whatever its value (and, having no
// strict mode, holds no tool to it), a server's "tool_choice" without
// named functions, Groq's "response_format json_schema is not supported
// with this model".
package openaitest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// A Turn is what the fake model does on one call.
type Turn struct {
	Reasoning string // reasoning text: chat's reasoning_content, a Responses summary with its encrypted item
	Text      string // streamed a word at a time
	Calls     []Call
	Refusal   string // the model's refusal (chat's delta.refusal, a Responses refusal part)
	Length    bool   // the reply is cut at the token limit (finish_reason length, incomplete max_output_tokens)
	Usage     Usage

	// Hold streams the first piece of the reply, then waits until the
	// client goes away: a reply that never ends, for cancellation.
	Hold bool

	// Status, when set, answers with this HTTP status and Body instead.
	Status int
	Body   string
}

// A Call is one tool call of a Turn; Args is its arguments' JSON.
type Call struct {
	Name, Args string
}

// Usage is a Turn's token counts.
type Usage struct {
	Input, Output, Cached, Reasoning int
}

// A Request is one call the server received.
type Request struct {
	Path string
	Body map[string]any
	Raw  []byte
	// Refused is the error message the server answered with, when a rule
	// refused the request; "" when it was served.
	Refused string
	// Cached is the prompt tokens credited as read from the cache
	// (cache.go).
	Cached int
}

// A Server is a fake OpenAI API, its base URL ending in /v1.
type Server struct {
	URL string

	// Reply is what the model does on the n-th call (from 0) that the
	// rules let through; nil replies "OK.".
	Reply func(n int, r *Request) Turn
	// Key, when set, is the API key every request must carry; a wrong
	// one is refused with OpenAI's 401, the key sent echoed in it.
	Key string
	// Gemini makes chat completions behave as Gemini's OpenAI endpoint
	// does with thought signatures.
	Gemini bool
	// Models is what GET /models lists (OpenRouter's shape when a model
	// has a context length).
	Models []Model
	// NoStrict, NoToolChoice and NoResponseFormat make the server one
	// without strict schemas, a named tool_choice, or a constrained reply.
	NoStrict, NoToolChoice, NoResponseFormat bool
	// NoFiles makes the server one without the Files API: /files is an
	// unknown path (404).
	NoFiles bool
	// UploadStatus, when set, answers every upload with this status (a
	// server's passing failure, 503, or its refusal).
	UploadStatus int
	// Server makes chat completions the named server's, with its own
	// field for a constrained reply: "vllm" (structured_outputs) or
	// "llama.cpp" (json_schema, grammar); "" is OpenAI's, which refuses
	// those fields.
	Server string
	// Cache credits cached prompt tokens as OpenAI does (cache.go).
	Cache bool

	srv       *httptest.Server
	mu        sync.Mutex
	requests  []*Request
	served    int
	cancelled int
	issued    map[string]issued // Responses: reasoning items by encrypted content
	following map[string]string // Responses: an item's id -> the reasoning item it came after
	sigs      map[string]string // chat (Gemini): a call id -> its signature
	files     map[string]File   // uploaded and not deleted, by id
	uploads   int
	deletes   int
	received  int64             // bytes of request bodies, uploads included
	prompts   map[string][]byte // the last prompt by prompt_cache_key (cache.go)
}

// A Model is one entry of GET /models.
type Model struct {
	ID            string
	ContextLength int
	Tools         *bool // OpenRouter's supported_parameters names tools (nil: no such list)
}

type issued struct{ id, next, model string }

// NewServer starts a fake; Close stops it.
func NewServer() *Server {
	s := &Server{issued: map[string]issued{}, following: map[string]string{}, sigs: map[string]string{}, files: map[string]File{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL + "/v1"
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

// Cancelled counts the replies whose client went away before they ended.
func (s *Server) Cancelled() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cancelled
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if s.Key != "" && r.Header.Get("Authorization") != "Bearer "+s.Key {
		_, _ = io.Copy(io.Discard, r.Body) // read, as a server does, before it answers
		got := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		writeError(w, 401, fmt.Sprintf("Incorrect API key provided: %s. You can find your API key at https://platform.openai.com/account/api-keys.", got), "", "invalid_api_key")
		return
	}
	r.Body = &counted{r.Body, s}
	path := strings.TrimPrefix(r.URL.Path, "/v1")
	if r.Method == http.MethodGet && path == "/models" {
		s.list(w)
		return
	}
	if path == "/files" || strings.HasPrefix(path, "/files/") {
		s.serveFiles(w, r, path)
		return
	}
	raw, _ := io.ReadAll(r.Body)
	req := &Request{Path: path, Raw: raw}
	if err := json.Unmarshal(raw, &req.Body); err != nil {
		req.Refused = "We could not parse the JSON body of your request."
	}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	s.mu.Unlock()
	if req.Refused != "" {
		writeError(w, 400, req.Refused, "", "")
		return
	}
	if msg, param := s.lacks(req.Body); msg != "" {
		s.refuse(w, req, 400, msg, param)
		return
	}
	if msg := keyProblem(req.Body); msg != "" {
		s.refuse(w, req, 400, msg, "prompt_cache_key")
		return
	}
	switch path {
	case "/chat/completions":
		s.chat(w, r, req)
	case "/responses":
		s.responses(w, r, req)
	default:
		writeError(w, 404, "Invalid URL (POST /v1"+path+")", "", "")
	}
}

// lacks is the 400 a server without one of the answer's mechanisms
// answers b with: its message and param; "" when it takes b.
func (s *Server) lacks(b map[string]any) (msg, param string) {
	tools, _ := b["tools"].([]any)
	if s.NoStrict {
		for i, t := range tools {
			f, _ := t.(map[string]any)
			if fn, ok := f["function"].(map[string]any); ok {
				f = fn
			}
			if _, has := f["strict"]; has { // the field itself, whatever its value
				return fmt.Sprintf("Invalid JSON payload received. Unknown name \"strict\" at 'tools[%d].function': Cannot find field.", i), ""
			}
		}
	}
	if _, named := b["tool_choice"].(map[string]any); named && s.NoToolChoice {
		return "Invalid tool_choice: this server takes only \"auto\" and \"none\".", "tool_choice"
	}
	text, _ := b["text"].(map[string]any)
	if s.NoResponseFormat && (b["response_format"] != nil || text["format"] != nil) {
		return "response_format json_schema is not supported with this model", "response_format"
	}
	return "", ""
}

// refuse answers req with a 400 naming param, and records it.
func (s *Server) refuse(w http.ResponseWriter, req *Request, status int, msg, param string) {
	s.mu.Lock()
	req.Refused = msg
	s.mu.Unlock()
	writeError(w, status, msg, param, "")
}

func writeError(w http.ResponseWriter, status int, msg, param, code string) {
	e := map[string]any{"message": msg, "type": "invalid_request_error", "param": nil, "code": nil}
	if param != "" {
		e["param"] = param
	}
	if code != "" {
		e["code"] = code
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"error": e})
}

// turn is the model's next turn for req.
func (s *Server) turn(req *Request) Turn {
	s.mu.Lock()
	n := s.served
	s.served++
	s.mu.Unlock()
	if s.Reply == nil {
		return Turn{Text: "OK."}
	}
	return s.Reply(n, req)
}

// An sseWriter writes server-sent events, flushed, and tells when the
// client has gone.
type sseWriter struct {
	w   http.ResponseWriter
	r   *http.Request
	s   *Server
	seq int
}

func newSSE(w http.ResponseWriter, r *http.Request, s *Server) *sseWriter {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	return &sseWriter{w: w, r: r, s: s}
}

func (e *sseWriter) data(v any) {
	b, _ := json.Marshal(v)
	fmt.Fprintf(e.w, "data: %s\n\n", b)
	e.w.(http.Flusher).Flush()
}

func (e *sseWriter) event(typ string, v map[string]any) {
	v["type"] = typ
	v["sequence_number"] = e.seq
	e.seq++
	b, _ := json.Marshal(v)
	fmt.Fprintf(e.w, "event: %s\ndata: %s\n\n", typ, b)
	e.w.(http.Flusher).Flush()
}

// hold waits for the client to go away, and counts it.
func (e *sseWriter) hold() {
	<-e.r.Context().Done()
	e.s.mu.Lock()
	e.s.cancelled++
	e.s.mu.Unlock()
}

// words splits text into the pieces it is streamed in.
func words(text string) []string {
	if text == "" {
		return nil
	}
	return strings.SplitAfter(text, " ")
}

// halves splits s in two, for arguments streamed in two fragments.
func halves(s string) []string {
	if len(s) < 2 {
		return []string{s}
	}
	return []string{s[:len(s)/2], s[len(s)/2:]}
}

// The model families the rules depend on.

// baseName is a model id without a vendor prefix, lowercased.
func baseName(model string) string {
	model = strings.ToLower(model)
	if i := strings.LastIndexByte(model, '/'); i >= 0 {
		model = model[i+1:]
	}
	return model
}

// noToolsWithEffort: OpenAI's GPT-5.4 and later on chat completions.
func noToolsWithEffort(model string) bool {
	rest, ok := strings.CutPrefix(baseName(model), "gpt-")
	if !ok {
		return false
	}
	num := rest
	if i := strings.IndexAny(rest, "-_ "); i >= 0 {
		num = rest[:i]
	}
	maj, mnr, _ := strings.Cut(num, ".")
	a, err := strconv.Atoi(maj)
	b, _ := strconv.Atoi(mnr)
	return err == nil && (a > 5 || a == 5 && b >= 4)
}

// doesNotReason: OpenAI's models that refuse reasoning_effort on chat
// completions, as every model that does not reason does; a model of
// another server that the fake does not know takes it (vLLM, Ollama's
// /v1 and others pass it to the model's template or ignore it).
func doesNotReason(model string) bool {
	b := baseName(model)
	return strings.HasPrefix(b, "gpt-3.5") || strings.HasPrefix(b, "gpt-4") || strings.HasPrefix(b, "chatgpt-") ||
		(strings.HasPrefix(b, "gpt-5") || strings.HasPrefix(b, "gpt-6")) && strings.Contains(b, "-chat")
}

// reasons: the models that take reasoning parameters.
func reasons(model string) bool {
	b := baseName(model)
	return (strings.HasPrefix(b, "gpt-5") || strings.HasPrefix(b, "gpt-6") || strings.HasPrefix(b, "o3") || strings.HasPrefix(b, "o4")) && !strings.Contains(b, "-chat")
}

// samplingRefused is the sampling parameter of b a reasoning model refuses
// while it reasons, or "": temperature and top_p are taken only with
// reasoning effort none ("Unsupported parameter: 'temperature' is not
// supported with this model.", as o-series and GPT-5 models answer;
// developers.openai.com/api/docs/guides/reasoning, GPT-5.2's "temperature,
// top_p and logprobs are supported only with reasoning effort none").
func samplingRefused(model, effort string, b map[string]any) string {
	if !reasons(model) || effort == "none" {
		return ""
	}
	for _, p := range []string{"temperature", "top_p"} {
		if _, has := b[p]; has {
			return p
		}
	}
	return ""
}

// strictProblem says why schema does not fit strict mode, or "".
func strictProblem(schema any, where string) string {
	m, ok := schema.(map[string]any)
	if !ok {
		return ""
	}
	if props, ok := m["properties"].(map[string]any); ok || m["type"] == "object" {
		if m["additionalProperties"] != false {
			return fmt.Sprintf("In context=(%s), 'additionalProperties' is required to be supplied and to be false.", where)
		}
		req, _ := m["required"].([]any)
		for k := range props {
			if !slices.Contains(req, any(k)) {
				return fmt.Sprintf("In context=(%s), 'required' is required to be supplied and to be an array including every key in properties. Missing '%s'.", where, k)
			}
		}
		for k, p := range props {
			if msg := strictProblem(p, join(where, "'properties', '"+k+"'")); msg != "" {
				return msg
			}
		}
	}
	if msg := strictProblem(m["items"], join(where, "'items'")); msg != "" {
		return msg
	}
	for _, key := range []string{"anyOf", "$defs", "definitions"} {
		switch v := m[key].(type) {
		case []any:
			for i, sub := range v {
				if msg := strictProblem(sub, join(where, fmt.Sprintf("'%s', '%d'", key, i))); msg != "" {
					return msg
				}
			}
		case map[string]any:
			for k, sub := range v {
				if msg := strictProblem(sub, join(where, fmt.Sprintf("'%s', '%s'", key, k))); msg != "" {
					return msg
				}
			}
		}
	}
	return ""
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + ", " + b
}

// mentionsJSON reports whether v holds the word json, in any case, in a
// string anywhere.
func mentionsJSON(v any) bool {
	b, _ := json.Marshal(v)
	return bytes.Contains(bytes.ToLower(b), []byte("json"))
}

func (s *Server) list(w http.ResponseWriter) {
	data := []map[string]any{}
	for _, m := range s.Models {
		d := map[string]any{"id": m.ID, "object": "model", "created": 1764495600, "owned_by": "openai"}
		if m.ContextLength > 0 {
			d["context_length"] = m.ContextLength
		}
		if m.Tools != nil {
			params := []string{"max_tokens", "temperature"}
			if *m.Tools {
				params = append(params, "tools", "tool_choice")
			}
			d["supported_parameters"] = params
		}
		data = append(data, d)
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data})
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func signature(id string) string { return base64.StdEncoding.EncodeToString([]byte("sig:" + id)) }
