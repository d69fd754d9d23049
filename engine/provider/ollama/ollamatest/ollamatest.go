// Package ollamatest is a fake Ollama server for tests: POST /api/chat
// (a stream of JSON lines), POST /api/show and GET /api/tags, holding each
// request to Ollama's documented behaviour (docs.ollama.com/api/chat,
// docs.ollama.com/api/show, docs.ollama.com/faq#how-can-i-specify-the-context-window-size;
// rules.go keeps them as named entries, the broken one's name in
// Request.Rule):
//
//   - the prompt is given options.num_ctx tokens, 4096 when the request
//     sets none, and a longer one is cut from the front, silently: the
//     model sees only its end (Request.Seen), so a request without num_ctx
//     visibly loses its system prompt and tools (ollama/ollama#18107);
//   - a model not pulled is a 404 ("model \"x\" not found, try pulling it
//     first"); tools for a model without the tools capability are refused
//     ("does not support tools"), think for one without thinking ("does
//     not support thinking");
//   - /api/show reports model_info["<arch>.context_length"] and the
//     model's capabilities; /api/tags lists the models;
//   - with MaxNumCtx set, the machine holds at most that context: a
//     request asking for more is refused, as Ollama refuses a model it
//     cannot load, with a 500 ("model requires more system memory (X
//     GiB) than is available (Y GiB)", ollama/ollama#13556);
//   - with NoFormatSchema, the server predates structured outputs (Ollama
//     before 0.5): a format that is a JSON Schema is refused ("invalid
//     JSON schema in format"), "json" is taken.
//
// Tokens are counted as a fourth of the bytes of the prompt as the fake
// renders it (system prompt, tools, then the messages).
package ollamatest

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"strings"
	"sync"

	"github.com/coda-acp/coda/engine/provider/internal/fakekit"
)

// DefaultNumCtx is the context a request without num_ctx gets.
const DefaultNumCtx = 4096

// A Model is one model the fake has pulled.
type Model struct {
	Name          string // "qwen3:8b"
	Arch          string // model_info's general.architecture: "qwen3", "gptoss"
	ContextLength int
	Capabilities  []string // "completion", "tools", "thinking", "vision", "embedding"
	ThinkLevels   bool     // think takes "low" | "medium" | "high" (show's thinking.values)
}

// A Turn is what the fake model does on one call.
type Turn struct {
	Thinking string
	Text     string
	Calls    []Call
	Length   bool // done_reason "length"
	Output   int  // eval_count
	Hold     bool // stream the first piece, then wait for the client to go
	// Status, when set, answers with this HTTP status and Body instead.
	Status int
	Body   string
	// Error, when set, is sent as an {"error": ...} line mid-stream.
	Error string
}

// A Call is one tool call; Args is its arguments' JSON object.
type Call struct{ Name, Args string }

// A Request is one call to /api/chat the server received.
type Request struct {
	Body map[string]any
	Raw  []byte
	// NumCtx is the context the request was given; Tokens the prompt's
	// size; Seen what of the prompt fit (its end), Truncated whether that
	// is less than all of it.
	NumCtx, Tokens  int
	Seen            string
	Truncated       bool
	fakekit.Verdict // why the rules refused it, if they did
	// Cached is the prompt's tokens the model's runner reused from its
	// last prompt (cache.go).
	Cached int
}

// A Server is a fake Ollama; URL is its root.
type Server struct {
	URL    string
	Models []Model
	// Reply is what the model does on the n-th call (from 0) the rules
	// let through; nil replies "OK.".
	Reply func(n int, r *Request) Turn
	// NoFormatSchema: format takes "json" only, not a JSON Schema.
	NoFormatSchema bool
	// MaxNumCtx, when set, is the largest context the machine has the
	// memory for: a request asking more is refused with Ollama's 500.
	MaxNumCtx int

	fakekit.Base[Request]
	mu      sync.Mutex
	shows   map[string]int
	prompts map[string]string // the last prompt by model (cache.go)
}

// NewServer starts a fake; Close stops it.
func NewServer(models ...Model) *Server {
	s := &Server{Models: models, shows: map[string]int{}}
	s.URL = s.Start(s.serve)
	return s
}

// Shows counts the /api/show calls for a model.
func (s *Server) Shows(model string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.shows[model]
}

func (s *Server) model(name string) *Model {
	for i := range s.Models {
		if s.Models[i].Name == name || s.Models[i].Name == name+":latest" {
			return &s.Models[i]
		}
	}
	return nil
}

func writeError(w http.ResponseWriter, status int, msg string) { fakekit.OllamaError(w, status, msg) }

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/api/tags":
		s.tags(w)
	case r.Method == http.MethodPost && r.URL.Path == "/api/show":
		s.show(w, r)
	case r.Method == http.MethodPost && r.URL.Path == "/api/chat":
		s.chat(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (s *Server) tags(w http.ResponseWriter) {
	var ms []any
	for _, m := range s.Models {
		ms = append(ms, map[string]any{"name": m.Name, "model": m.Name, "modified_at": "2026-11-02T10:00:00Z", "size": 5_000_000_000,
			"details": map[string]any{"format": "gguf", "family": m.Arch, "families": []string{m.Arch}, "parameter_size": "8B", "quantization_level": "Q4_K_M"}})
	}
	fakekit.WriteJSON(w, 200, "application/json; charset=utf-8", map[string]any{"models": ms})
}

func (s *Server) show(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model string `json:"model"`
	}
	json.NewDecoder(r.Body).Decode(&req)
	s.mu.Lock()
	s.shows[req.Model]++
	s.mu.Unlock()
	m := s.model(req.Model)
	if m == nil {
		writeError(w, 404, fmt.Sprintf("model '%s' not found", req.Model))
		return
	}
	reply := map[string]any{
		"modelfile":  "# Modelfile generated by \"ollama show\"\nFROM /models/blobs/sha256-0\n",
		"parameters": "stop                           \"<|im_end|>\"",
		"template":   "{{ .System }}{{ range .Messages }}{{ .Content }}{{ end }}",
		"details":    map[string]any{"parent_model": "", "format": "gguf", "family": m.Arch, "families": []string{m.Arch}, "parameter_size": "8.2B", "quantization_level": "Q4_K_M"},
		"model_info": map[string]any{
			"general.architecture":     m.Arch,
			"general.parameter_count":  8190735360,
			m.Arch + ".context_length": m.ContextLength,
			m.Arch + ".block_count":    36,
		},
		"capabilities": m.Capabilities,
	}
	if m.ThinkLevels {
		reply["thinking"] = map[string]any{"values": []string{"low", "medium", "high"}, "default": "medium"}
	}
	fakekit.WriteJSON(w, 200, "application/json; charset=utf-8", reply)
}

// render is the prompt as the fake counts it: the system messages, the
// tools, then the rest, in order.
func render(body map[string]any) string {
	var b strings.Builder
	msgs, _ := body["messages"].([]any)
	for _, m := range msgs {
		if m, _ := m.(map[string]any); m["role"] == "system" {
			fmt.Fprintf(&b, "<system>%s</system>\n", m["content"])
		}
	}
	if tools, ok := body["tools"]; ok {
		t, _ := json.Marshal(tools)
		fmt.Fprintf(&b, "<tools>%s</tools>\n", t)
	}
	for _, m := range msgs {
		m, _ := m.(map[string]any)
		if m["role"] == "system" {
			continue
		}
		fmt.Fprintf(&b, "<%s>%s", m["role"], m["content"])
		if tc, ok := m["tool_calls"]; ok {
			t, _ := json.Marshal(tc)
			b.Write(t)
		}
		fmt.Fprintf(&b, "</%s>\n", m["role"])
	}
	return b.String()
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	req := &Request{Raw: raw}
	s.Log.Add(req)
	if ref := fakekit.Judge(&s.Log, req, rules, s.call(req)); ref != nil {
		writeError(w, ref.Status, ref.Msg)
		return
	}
	prompt := render(req.Body)
	req.Tokens = (len(prompt) + 3) / 4
	req.Seen = prompt
	model, _ := req.Body["model"].(string)
	s.credit(req, model, prompt)
	if req.Tokens > req.NumCtx {
		req.Seen, req.Truncated = prompt[len(prompt)-req.NumCtx*4:], true
	}
	n := s.Log.Serve()
	t := Turn{Text: "OK."}
	if s.Reply != nil {
		t = s.Reply(n, req)
	}
	if t.Status != 0 {
		fakekit.WriteRaw(w, t.Status, "application/json; charset=utf-8", t.Body)
		return
	}
	s.stream(w, r, req, n, t)
}

// stream writes t as Ollama streams a reply: a JSON line a piece, then
// the last with the counts.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, req *Request, n int, t Turn) {
	name, _ := req.Body["model"].(string)
	e := fakekit.NDJSON(w)
	line := func(msg map[string]any, extra map[string]any) {
		v := map[string]any{"model": name, "created_at": "2026-12-01T10:00:00.000000Z", "message": msg, "done": false}
		maps.Copy(v, extra)
		e.Data(v)
	}
	first := true
	piece := func(msg map[string]any) bool {
		msg["role"] = "assistant"
		if _, ok := msg["content"]; !ok {
			msg["content"] = ""
		}
		line(msg, nil)
		if first && t.Hold {
			s.Log.Hold(r.Context())
			return false
		}
		first = false
		return true
	}
	for _, p := range fakekit.Words(t.Thinking) {
		if !piece(map[string]any{"thinking": p}) {
			return
		}
	}
	for _, p := range fakekit.Words(t.Text) {
		if !piece(map[string]any{"content": p}) {
			return
		}
	}
	if t.Error != "" {
		e.Data(map[string]string{"error": t.Error})
		return
	}
	if len(t.Calls) > 0 {
		var calls []any
		for i, c := range t.Calls {
			calls = append(calls, map[string]any{"id": fmt.Sprintf("call_%d_%d", n, i), "function": map[string]any{"index": i, "name": c.Name, "arguments": json.RawMessage(c.Args)}})
		}
		if !piece(map[string]any{"tool_calls": calls}) {
			return
		}
	}
	line(map[string]any{"role": "assistant", "content": ""}, final(req, t))
}

// final is what the last line adds: the reason the reply ended and the
// counts, in one place.
func final(req *Request, t Turn) map[string]any {
	reason := "stop"
	if t.Length {
		reason = "length"
	}
	return map[string]any{
		"done": true, "done_reason": reason, "total_duration": 4883583458, "load_duration": 1334875,
		"prompt_eval_count": min(req.Tokens, req.NumCtx), "prompt_eval_duration": 342546000,
		"eval_count": t.Output, "eval_duration": 4535599000,
	}
}
