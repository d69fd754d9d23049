package ollama

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/provider/ollama/ollamatest"
	"github.com/coda-acp/coda/engine/provider/sse"
)

var hi = &llm.Request{System: "Be brief.", Messages: []llm.Message{{Role: llm.RoleUser, Text: "hi"}}}

func streamOf(t *testing.T, m llm.Model, req *llm.Request) (*llm.Response, []llm.Delta, error) {
	t.Helper()
	var deltas []llm.Delta
	resp, err := m.Stream(context.Background(), req, func(d llm.Delta) error {
		deltas = append(deltas, d)
		return nil
	})
	return resp, deltas, err
}

// recorded serves show for /api/show and the testdata file chat for
// /api/chat, recording the chat bodies.
type recorded struct {
	*httptest.Server
	mu     sync.Mutex
	bodies [][]byte
	shows  int
}

func newRecorded(t *testing.T, show, chat string) *recorded {
	r := &recorded{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		file := chat
		if req.URL.Path == "/api/show" {
			r.mu.Lock()
			r.shows++
			r.mu.Unlock()
			file = show
		} else {
			r.mu.Lock()
			r.bodies = append(r.bodies, body)
			r.mu.Unlock()
		}
		b, err := os.ReadFile("testdata/" + file)
		if err != nil {
			t.Error(err)
		}
		w.Write(b)
	}))
	t.Cleanup(r.Close)
	return r
}

func logBuffer() (*slog.Logger, *bytes.Buffer) {
	var b bytes.Buffer
	return slog.New(slog.NewTextHandler(&b, nil)), &b
}

// The recorded streams of Ollama's documentation read into the reply they
// hold; num_ctx is the model's context length as the recorded /api/show
// reports it (llama.context_length).
func TestModel_Stream(t *testing.T) {
	tests := []struct {
		file   string
		want   *llm.Response
		deltas []llm.Delta
	}{{
		file:   "chat_stream.ndjson",
		want:   &llm.Response{Text: "The sky is blue.", StopReason: llm.StopEndTurn, Usage: llm.Usage{InputTokens: 26, OutputTokens: 282, ContextWindow: 8192}},
		deltas: []llm.Delta{{Text: "The"}, {Text: " sky is blue."}},
	}, {
		file: "chat_thinking_tools.ndjson",
		want: &llm.Response{
			Thinking: "The user wants the weather.",
			ToolCalls: []llm.ToolCall{
				{ID: "call_x2k3", Name: "get_current_weather", Arguments: json.RawMessage(`{"format":"celsius","location":"Paris, FR"}`)},
				{ID: "call_1", Name: "get_time", Arguments: json.RawMessage(`{}`)},
			},
			StopReason: llm.StopToolUse,
			Usage:      llm.Usage{InputTokens: 122, OutputTokens: 33, ContextWindow: 8192},
		},
		deltas: []llm.Delta{{Thinking: "The user wants"}, {Thinking: " the weather."}},
	}, {
		file:   "chat_length.ndjson",
		want:   &llm.Response{Text: `{"age": 22, "avail`, StopReason: llm.StopMaxTokens, Usage: llm.Usage{InputTokens: 34, OutputTokens: 8, ContextWindow: 8192}},
		deltas: []llm.Delta{{Text: `{"age": 22, "avail`}},
	}}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			r := newRecorded(t, "show_llama.json", tt.file)
			resp, deltas, err := streamOf(t, New("llama3.2", Options{BaseURL: r.URL, Client: r.Client()}), hi)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, resp); diff != "" {
				t.Errorf("response (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.deltas, deltas); diff != "" {
				t.Errorf("deltas (-want +got):\n%s", diff)
			}
			var body map[string]any
			json.Unmarshal(r.bodies[0], &body)
			if diff := cmp.Diff(map[string]any{"num_ctx": 8192.0}, body["options"]); diff != "" {
				t.Errorf("options (-want +got):\n%s", diff)
			}
		})
	}
}

// An error line after the reply began ends it: a runner that died is
// worth another try only before anything was shown.
func TestModel_Stream_errorLine(t *testing.T) {
	r := newRecorded(t, "show_llama.json", "chat_error.ndjson")
	_, _, err := streamOf(t, New("llama3.2", Options{BaseURL: r.URL, Client: r.Client(), Retry: sse.Retry{Sleep: func(context.Context, time.Duration) error { return nil }}}), hi)
	if err == nil || !strings.Contains(err.Error(), "unexpected EOF") || !strings.Contains(err.Error(), "broke off after it had begun") || len(r.bodies) != 1 {
		t.Errorf("err %v after %d tries", err, len(r.bodies))
	}
}

// The request body: messages with images as base64, tools, tool calls
// with their arguments as objects, tool results naming their tool,
// thinking sent back, format from the reply, think from the effort,
// num_ctx and num_predict.
func TestModel_request(t *testing.T) {
	f := ollamatest.NewServer(ollamatest.Model{Name: "qwen3:8b", Arch: "qwen3", ContextLength: 40960, Capabilities: []string{"completion", "tools", "thinking", "vision"}})
	defer f.Close()
	m := New("qwen3:8b", Options{BaseURL: f.URL + "/v1", Client: f.Client(), MaxTokens: 1000})
	req := &llm.Request{
		System: "Be brief.",
		Messages: []llm.Message{
			{Role: llm.RoleUser, Text: "What is it?", Images: []llm.Image{{MIMEType: "image/png", Data: []byte("png")}}},
			{Role: llm.RoleAssistant, Thinking: "Look at the file.", ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "read_file", Arguments: json.RawMessage(`{"path":"a"}`)}}},
			{Role: llm.RoleTool, ToolCallID: "call_1", ToolName: "read_file", Text: "gone", IsError: true},
		},
		Tools:      []llm.ToolSpec{{Name: "read_file", Description: "Read a file.", Schema: json.RawMessage(`{"type":"object"}`), Strict: true}},
		ToolChoice: "read_file",
		Effort:     llm.EffortHigh,
		Reply:      &llm.ReplyFormat{Schema: json.RawMessage(`{"type":"object","properties":{"age":{"type":"integer"}}}`)},
	}
	if _, _, err := streamOf(t, m, req); err != nil {
		t.Fatal(err)
	}
	got := f.Requests()[0].Body
	want := map[string]any{
		"model": "qwen3:8b", "stream": true, "think": true,
		"options": map[string]any{"num_ctx": 40960.0, "num_predict": 1000.0},
		"format":  map[string]any{"type": "object", "properties": map[string]any{"age": map[string]any{"type": "integer"}}},
		"messages": []any{
			map[string]any{"role": "system", "content": "Be brief."},
			map[string]any{"role": "user", "content": "What is it?", "images": []any{"cG5n"}},
			map[string]any{"role": "assistant", "content": "", "thinking": "Look at the file.", "tool_calls": []any{
				map[string]any{"id": "call_1", "function": map[string]any{"name": "read_file", "arguments": map[string]any{"path": "a"}}},
			}},
			map[string]any{"role": "tool", "content": "Error: gone", "tool_name": "read_file", "tool_call_id": "call_1"},
		},
		"tools": []any{map[string]any{"type": "function", "function": map[string]any{"name": "read_file", "description": "Read a file.", "parameters": map[string]any{"type": "object"}}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("body (-want +got):\n%s", diff)
	}
	if r := f.Requests()[0]; r.Refused != "" || r.Truncated {
		t.Errorf("refused %q, truncated %v", r.Refused, r.Truncated)
	}
}

// think as each model takes it: levels for one that takes levels (its
// extras folded onto them), true or false for the others, nothing for a
// model that does not think (Ollama refuses it) or when no effort is asked.
func TestModel_think(t *testing.T) {
	f := ollamatest.NewServer(
		ollamatest.Model{Name: "gpt-oss:20b", Arch: "gptoss", ContextLength: 131072, Capabilities: []string{"completion", "tools", "thinking"}, ThinkLevels: true},
		ollamatest.Model{Name: "qwen3:8b", Arch: "qwen3", ContextLength: 40960, Capabilities: []string{"completion", "tools", "thinking"}},
		ollamatest.Model{Name: "llama3.1:8b", Arch: "llama", ContextLength: 131072, Capabilities: []string{"completion", "tools"}},
	)
	defer f.Close()
	log, logs := logBuffer()
	for _, tt := range []struct {
		model, effort string
		want          any // the think field; nil when absent
	}{
		{"gpt-oss:20b", llm.EffortHigh, "high"},
		{"gpt-oss:20b", llm.EffortMinimal, "low"},
		{"gpt-oss:20b", llm.EffortXHigh, "high"},
		{"gpt-oss:20b", "", nil},
		{"qwen3:8b", llm.EffortLow, true},
		{"qwen3:8b", llm.EffortOff, false},
		{"llama3.1:8b", llm.EffortHigh, nil},
	} {
		m := New(tt.model, Options{BaseURL: f.URL, Client: f.Client(), Log: log})
		if _, _, err := streamOf(t, m, &llm.Request{Messages: hi.Messages, Effort: tt.effort}); err != nil {
			t.Errorf("%s, effort %q: %v", tt.model, tt.effort, err)
			continue
		}
		reqs := f.Requests()
		if got := reqs[len(reqs)-1].Body["think"]; got != tt.want {
			t.Errorf("%s, effort %q: think %v, want %v", tt.model, tt.effort, got, tt.want)
		}
	}
	if !strings.Contains(logs.String(), "the model does not think") {
		t.Errorf("a model that does not think was not said:\n%s", logs)
	}
}

// The fake cuts a prompt longer than num_ctx from the front, as Ollama
// does: a request without num_ctx (the server's 4096) loses its system
// prompt and tools, one with the model's length keeps them. /api/show is
// asked once for the model, however many calls; a cap in the config that
// is below the model's length is used, and said once with both figures.
func TestModel_numCtx(t *testing.T) {
	f := ollamatest.NewServer(ollamatest.Model{Name: "qwen3:14b", Arch: "qwen3", ContextLength: 40960, Capabilities: []string{"completion", "tools"}})
	defer f.Close()
	f.Reply = func(_ int, r *ollamatest.Request) ollamatest.Turn {
		if strings.Contains(r.Seen, "submit_output") {
			return ollamatest.Turn{Calls: []ollamatest.Call{{Name: "submit_output", Args: `{"content":"42"}`}}}
		}
		return ollamatest.Turn{Text: "No-tool-to-answer-with."}
	}
	long := &llm.Request{
		System:   "Answer with submit_output.",
		Messages: []llm.Message{{Role: llm.RoleUser, Text: strings.Repeat("Here is the file. ", 2000)}}, // ~9,000 tokens
		Tools:    []llm.ToolSpec{{Name: "submit_output", Schema: json.RawMessage(`{"type":"object"}`)}},
	}
	// What the server would do with no num_ctx: the tools are cut away.
	body, _, _ := New("qwen3:14b", Options{}).encode(long, nil, 0)
	resp, err := http.Post(f.URL+"/api/chat", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	reply, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if r := f.Requests()[0]; !r.Truncated || r.NumCtx != ollamatest.DefaultNumCtx || strings.Contains(r.Seen, "submit_output") || !strings.Contains(string(reply), "No-tool-to-answer-with.") {
		t.Fatalf("without num_ctx: truncated %v at %d, the model said %s", r.Truncated, r.NumCtx, reply)
	}

	log, logs := logBuffer()
	m := New("qwen3:14b", Options{BaseURL: f.URL, Client: f.Client(), Log: log})
	for range 3 {
		resp, _, err := streamOf(t, m, long)
		if err != nil || len(resp.ToolCalls) != 1 || resp.Usage.ContextWindow != 40960 {
			t.Fatalf("with num_ctx: %+v, %v", resp, err)
		}
	}
	if r := f.Requests()[1]; r.Truncated || r.NumCtx != 40960 {
		t.Errorf("with num_ctx: truncated %v at %d", r.Truncated, r.NumCtx)
	}
	if n := f.Shows("qwen3:14b"); n != 1 {
		t.Errorf("/api/show asked %d times", n)
	}
	// A cap below the model's length is used and said, once.
	f2 := ollamatest.NewServer(ollamatest.Model{Name: "big:1", Arch: "llama", ContextLength: 131072, Capabilities: []string{"completion"}})
	defer f2.Close()
	m = New("big:1", Options{BaseURL: f2.URL, Client: f2.Client(), NumCtx: 16384, Log: log})
	for range 2 {
		if resp, _, err := streamOf(t, m, hi); err != nil || resp.Usage.ContextWindow != 16384 {
			t.Fatalf("capped: %+v %v", resp, err)
		}
	}
	if r := f2.Requests()[0]; r.NumCtx != 16384 {
		t.Errorf("capped num_ctx %d", r.NumCtx)
	}
	if n := strings.Count(logs.String(), "context_length=131072 num_ctx=16384"); n != 1 {
		t.Errorf("the cap said %d times:\n%s", n, logs)
	}
}

// A model whose whole context needs more memory than the machine has:
// Ollama refuses to load it (a 500), which no later try changes. The
// call is not tried again, and its error says what to do: ask for less
// with num_ctx, which then loads.
func TestModel_outOfMemory(t *testing.T) {
	f := ollamatest.NewServer(ollamatest.Model{Name: "qwen3-coder:30b", Arch: "qwen3moe", ContextLength: 262144, Capabilities: []string{"completion", "tools"}})
	defer f.Close()
	f.MaxNumCtx = 65536
	waits := 0
	retry := sse.Retry{Sleep: func(context.Context, time.Duration) error { waits++; return nil }}
	m := New("qwen3-coder:30b", Options{BaseURL: f.URL, Client: f.Client(), Retry: retry})
	_, _, err := streamOf(t, m, hi)
	if err == nil {
		t.Fatal("the fake loaded a context it has no memory for")
	}
	for _, want := range []string{"model requires more system memory", "a context of 262144 tokens (num_ctx)", "set num_ctx = 65536 (or less) in config.toml's [providers.ollama]"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error lacks %q: %v", want, err)
		}
	}
	if n := len(f.Requests()); n != 1 || waits != 0 {
		t.Errorf("%d requests, %d waits: a refusal for memory was tried again", n, waits)
	}
	m = New("qwen3-coder:30b", Options{BaseURL: f.URL, Client: f.Client(), Retry: retry, NumCtx: 65536})
	if _, _, err := streamOf(t, m, hi); err != nil {
		t.Errorf("with num_ctx = 65536: %v", err)
	}
}

// Ollama's refusals: a model not pulled is unavailable (the stage tries
// its next), tools for a model without them are refused as such, a bad
// format is the reply's mechanism refused.
func TestModel_refusals(t *testing.T) {
	f := ollamatest.NewServer(ollamatest.Model{Name: "gemma3:4b", Arch: "gemma3", ContextLength: 131072, Capabilities: []string{"completion", "vision"}})
	defer f.Close()
	f.Reply = func(_ int, r *ollamatest.Request) ollamatest.Turn {
		if r.Body["format"] != nil {
			return ollamatest.Turn{Status: 500, Body: `{"error":"invalid JSON schema in format"}`}
		}
		return ollamatest.Turn{Text: "OK."}
	}
	opts := Options{BaseURL: f.URL, Client: f.Client(), Retry: sse.Retry{Tries: 1}}
	_, _, err := streamOf(t, New("llama9", opts), hi)
	if !errors.Is(err, llm.ErrModelUnavailable) || !strings.Contains(err.Error(), "try pulling it first") {
		t.Errorf("not pulled: %v", err)
	}
	_, _, err = streamOf(t, New("gemma3:4b", opts), &llm.Request{Messages: hi.Messages, Tools: []llm.ToolSpec{{Name: "x"}}})
	if !errors.Is(err, llm.ErrToolsUnsupported) {
		t.Errorf("no tools: %v", err)
	}
	_, _, err = streamOf(t, New("gemma3:4b", opts), &llm.Request{Messages: hi.Messages, Reply: &llm.ReplyFormat{Schema: json.RawMessage(`{"type":"objec"}`)}})
	var me *llm.MechanismError
	if !errors.As(err, &me) || me.Mechanism != sse.MechanismReply {
		t.Errorf("format refused: %v", err)
	}
	// Without a schema, format is "json".
	m := New("gemma3:4b", opts)
	raw, _, _ := m.encode(&llm.Request{Messages: hi.Messages, Reply: &llm.ReplyFormat{}}, nil, 0)
	if !strings.Contains(string(raw), `"format":"json"`) {
		t.Errorf("json without a schema: %s", raw)
	}
}

// Cancelling mid-stream ends the call with the context's error, and the
// server sees its client go.
func TestModel_cancel(t *testing.T) {
	f := ollamatest.NewServer(ollamatest.Model{Name: "qwen3:8b", Arch: "qwen3", ContextLength: 40960, Capabilities: []string{"completion"}})
	f.Reply = func(int, *ollamatest.Request) ollamatest.Turn {
		return ollamatest.Turn{Text: "and on and on", Hold: true}
	}
	m := New("qwen3:8b", Options{BaseURL: f.URL, Client: f.Client()})
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	_, err := m.Stream(ctx, hi, func(llm.Delta) error { n++; cancel(); return nil })
	if !errors.Is(err, context.Canceled) || n != 1 {
		t.Errorf("err %v after %d deltas", err, n)
	}
	f.Close()
	if f.Cancelled() != 1 {
		t.Errorf("%d replies cancelled", f.Cancelled())
	}
}

// A key in an error body is masked wherever it falls, in each shape
// Ollama sends an error in: a status with {"error": ...}, a line of the
// stream, a body that is not JSON.
func TestModel_keyInErrorAtEveryOffset(t *testing.T) {
	const key = "sk-ollama-Zq8RrT2vLx9PmW4kN7bH3cJ5dF6gA1s"
	var mu sync.Mutex
	body := ""
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/show" {
			io.WriteString(w, `{"model_info":{"general.architecture":"llama","llama.context_length":8192},"capabilities":["completion"]}`)
			return
		}
		mu.Lock()
		b := body
		mu.Unlock()
		if !strings.HasPrefix(b, `{"model"`) {
			w.WriteHeader(http.StatusUnauthorized)
		}
		io.WriteString(w, b)
	}))
	defer srv.Close()
	m := New("llama3.2", Options{BaseURL: srv.URL, APIKey: key, Client: srv.Client(), Retry: sse.Retry{Tries: 1}})
	for off := 0; off <= 600; off++ {
		pad := strings.Repeat("x", off)
		for _, b := range []string{
			`{"error":"` + pad + key + `"}`,
			pad + key,
			`{"model":"llama3.2","message":{"role":"assistant","content":""},"done":false}` + "\n" + `{"error":"` + pad + key + `"}` + "\n",
		} {
			mu.Lock()
			body = b
			mu.Unlock()
			_, err := m.Stream(context.Background(), hi, func(llm.Delta) error { return nil })
			if err == nil {
				t.Fatalf("no error for %q", b)
			}
			if p := leaked(err.Error(), key); p != "" {
				t.Fatalf("key at %d: %q of it is in %q", off, p, err)
			}
		}
	}
}

func leaked(s, key string) string {
	for i := 0; i+8 <= len(key); i++ {
		if strings.Contains(s, key[i:i+8]) {
			return key[i : i+8]
		}
	}
	return ""
}

// The model list: /api/tags in order, embedding models marked by name or
// family, models the server lists without tools marked.
func TestLister(t *testing.T) {
	r := newRecorded(t, "show_llama.json", "tags.json")
	got, err := NewLister(Options{BaseURL: r.URL + "/v1", Client: r.Client()}).List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range got {
		ids = append(ids, fmt.Sprintf("%s embedding=%v notools=%v", m.ID, m.Embedding, m.NoTools != ""))
	}
	want := []string{"codellama:13b embedding=false notools=false", "llama3:latest embedding=false notools=false", "nomic-embed-text:latest embedding=true notools=true", "gemma3:4b embedding=false notools=false"}
	if diff := cmp.Diff(want, ids); diff != "" {
		t.Errorf("listed (-want +got):\n%s", diff)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"models":[{"name":"gemma3:4b","capabilities":["completion","vision"]},{"name":"bge-m3","capabilities":["embedding"]}]}`)
	}))
	defer srv.Close()
	got, err = NewLister(Options{BaseURL: srv.URL, Client: srv.Client()}).List(context.Background())
	if err != nil || len(got) != 2 || got[0].NoTools == "" || got[0].Embedding || !got[1].Embedding {
		t.Errorf("by capabilities: %+v %v", got, err)
	}
}
