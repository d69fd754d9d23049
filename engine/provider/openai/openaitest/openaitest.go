// Package openaitest is a fake OpenAI API for tests: chat completions,
// the Responses API and the model list, streamed as the real ones stream,
// and holding each request to the rules OpenAI documents, answered with
// the error bodies OpenAI sends when one is broken. Tests script what the
// model does (Turn); the fake records what it was sent.
//
// The rules it enforces, each with its source (rules.go keeps them as
// data: one named entry a rule, checked in order, the first broken
// answered and its name kept in Request.Rule):
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
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/coda-acp/coda/engine/provider/internal/fakekit"
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
	Path            string
	Body            map[string]any
	Raw             []byte
	fakekit.Verdict // why the rules refused it, if they did
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

	fakekit.Base[Request]
	files    fakekit.Files
	received fakekit.Bytes

	mu        sync.Mutex
	issued    map[string]issued // Responses: reasoning items by encrypted content
	following map[string]string // Responses: an item's id -> the reasoning item it came after
	sigs      map[string]string // chat (Gemini): a call id -> its signature
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
	s := &Server{issued: map[string]issued{}, following: map[string]string{}, sigs: map[string]string{}}
	s.URL = s.Start(s.serve) + "/v1"
	return s
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if s.Key != "" && r.Header.Get("Authorization") != "Bearer "+s.Key {
		_, _ = io.Copy(io.Discard, r.Body) // read, as a server does, before it answers
		got := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		writeError(w, 401, fmt.Sprintf("Incorrect API key provided: %s. You can find your API key at https://platform.openai.com/account/api-keys.", got), "", "invalid_api_key")
		return
	}
	s.received.Count(r)
	path := strings.TrimPrefix(r.URL.Path, "/v1")
	switch {
	case r.Method == http.MethodGet && path == "/models":
		s.list(w)
	case path == "/files" || strings.HasPrefix(path, "/files/"):
		s.serveFiles(w, r, path)
	case path == "/chat/completions":
		s.endpoint(w, r, path, chatRules, s.chat)
	case path == "/responses":
		s.endpoint(w, r, path, responsesRules, s.responses)
	default:
		_, _ = io.Copy(io.Discard, r.Body)
		writeError(w, 404, "Invalid URL ("+r.Method+" /v1"+path+")", "", "")
	}
}

// endpoint serves a POST of JSON: the request recorded and held to rules,
// then answered by reply with the scripted turn.
func (s *Server) endpoint(w http.ResponseWriter, r *http.Request, path string, rules []fakekit.Rule[*call], reply func(http.ResponseWriter, *http.Request, *Request, Turn)) {
	raw, _ := io.ReadAll(r.Body)
	req := &Request{Path: path, Raw: raw}
	if err := json.Unmarshal(raw, &req.Body); err != nil {
		req.Refused, req.Rule = "We could not parse the JSON body of your request.", "json"
	}
	s.Log.Add(req)
	if req.Refused != "" {
		writeError(w, 400, req.Refused, "", "")
		return
	}
	if ref := fakekit.Judge(&s.Log, req, rules, s.call(req)); ref != nil {
		writeError(w, ref.Status, ref.Msg, ref.Param, "")
		return
	}
	t := s.turn(req)
	t.Usage = s.credit(req, t.Usage)
	if t.Status != 0 {
		fakekit.WriteRaw(w, t.Status, "application/json", t.Body)
		return
	}
	reply(w, r, req, t)
}

func writeError(w http.ResponseWriter, status int, msg, param, code string) {
	fakekit.OpenAIError(w, status, msg, param, code)
}

// turn is the model's next turn for req.
func (s *Server) turn(req *Request) Turn {
	n := s.Log.Serve()
	if s.Reply == nil {
		return Turn{Text: "OK."}
	}
	return s.Reply(n, req)
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
	fakekit.WriteJSON(w, 200, "application/json", map[string]any{"object": "list", "data": data})
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func signature(id string) string { return base64.StdEncoding.EncodeToString([]byte("sig:" + id)) }
