package openai

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/provider/sse"
	"github.com/google/go-cmp/cmp"
)

const testKey = "sk-test-0123456789abcdef"

// A reply is one canned HTTP response.
type reply struct {
	status int
	header map[string]string
	file   string // a testdata body
	body   string
}

// server serves replies in order (the last one again when they run out)
// and records each request.
type server struct {
	*httptest.Server
	mu       sync.Mutex
	replies  []reply
	requests []recorded
}

type recorded struct {
	header http.Header
	body   []byte
	path   string
}

func newServer(t *testing.T, replies ...reply) *server {
	t.Helper()
	s := &server{replies: replies}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.requests = append(s.requests, recorded{header: r.Header.Clone(), body: body, path: r.URL.Path})
		rep := s.replies[0]
		if len(s.replies) > 1 {
			s.replies = s.replies[1:]
		}
		s.mu.Unlock()
		for k, v := range rep.header {
			w.Header().Set(k, v)
		}
		if rep.status == 0 {
			rep.status = http.StatusOK
			if w.Header().Get("Content-Type") == "" {
				w.Header().Set("Content-Type", "text/event-stream")
			}
		}
		w.WriteHeader(rep.status)
		b := []byte(rep.body)
		if rep.file != "" {
			var err error
			if b, err = os.ReadFile("testdata/" + rep.file); err != nil {
				t.Error(err)
			}
		}
		w.Write(b)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *server) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

// sleeps records the backoff waits instead of waiting.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (sl *sleeps) sleep(ctx context.Context, d time.Duration) error {
	sl.mu.Lock()
	sl.d = append(sl.d, d)
	sl.mu.Unlock()
	return ctx.Err()
}

func newModel(s *server, sl *sleeps) *Model {
	return New("gpt-4o", Options{
		BaseURL:       s.URL + "/v1",
		APIKey:        testKey,
		Headers:       map[string]string{"HTTP-Referer": "https://example.com/coda", "X-Title": "coda"},
		Retry:         sse.Retry{Sleep: sl.sleep},
		Client:        s.Client(),
		ContextWindow: 128000,
	})
}

var simpleRequest = &llm.Request{System: "Be brief.", Messages: []llm.Message{{Role: llm.RoleUser, Text: "hi"}}}

// collect streams req and returns the response and the deltas seen.
func collect(t *testing.T, m *Model, req *llm.Request) (*llm.Response, []llm.Delta, error) {
	t.Helper()
	var deltas []llm.Delta
	resp, err := m.Stream(context.Background(), req, func(d llm.Delta) error {
		deltas = append(deltas, d)
		return nil
	})
	return resp, deltas, err
}

func TestModel_Stream(t *testing.T) {
	tests := []struct {
		name   string
		file   string
		want   *llm.Response
		deltas []llm.Delta
	}{{
		name: "text and two parallel tool calls in fragments",
		file: "text_parallel_tools.sse",
		want: &llm.Response{
			Text: "I'll check both files.",
			ToolCalls: []llm.ToolCall{
				{ID: "call_Nq2bS0nJ5mW1c8ZpTfQx4Hk7", Name: "read_file", Arguments: json.RawMessage(`{"path": "auth/login.go"}`)},
				{ID: "call_4TgVh8cRr2yXe0LaPb6sDm1K", Name: "grep", Arguments: json.RawMessage(`{"pattern": "password", "path": "auth"}`)},
			},
			StopReason: llm.StopToolUse,
			Usage:      llm.Usage{InputTokens: 412, OutputTokens: 61, ContextWindow: 128000},
		},
		deltas: []llm.Delta{{Text: "I'll check"}, {Text: " both files."}},
	}, {
		name: "Ollama: whole tool calls with finish_reason stop",
		file: "ollama_whole_tools.sse",
		want: &llm.Response{
			ToolCalls: []llm.ToolCall{
				{ID: "call_yk2n8f1q", Name: "list_files", Arguments: json.RawMessage(`{"path":"."}`)},
				{ID: "call_0d7wqz3m", Name: "read_file", Arguments: json.RawMessage(`{"path":"go.mod"}`)},
			},
			StopReason: llm.StopToolUse,
			Usage:      llm.Usage{InputTokens: 220, OutputTokens: 38, ContextWindow: 128000},
		},
	}, {
		name: "tool calls without index, arguments as an object, choices null with usage",
		file: "noindex_fragments.sse",
		want: &llm.Response{
			ToolCalls: []llm.ToolCall{
				{ID: "call_1", Name: "read_file", Arguments: json.RawMessage(`{"path": "a.go"}`)},
				{ID: "call_2", Name: "list_files", Arguments: json.RawMessage(`{"path":"src"}`)},
				{ID: "call_2", Name: "submit_output", Arguments: json.RawMessage(`{}`)},
			},
			StopReason: llm.StopToolUse,
			Usage:      llm.Usage{InputTokens: 90, OutputTokens: 30, ContextWindow: 128000},
		},
	}, {
		name: "reasoning_content deltas, keep-alive comments, usage on the last choice chunk",
		file: "reasoning_content.sse",
		want: &llm.Response{
			Text:       "4",
			Thinking:   "The user asks for 2+2.",
			StopReason: llm.StopEndTurn,
			Usage:      llm.Usage{InputTokens: 13, OutputTokens: 25, ReasoningTokens: 21, ContextWindow: 128000},
		},
		deltas: []llm.Delta{{Thinking: "The user asks"}, {Thinking: " for 2+2."}, {Text: "4"}},
	}, {
		name: "reasoning deltas (OpenRouter), finish_reason length",
		file: "reasoning.sse",
		want: &llm.Response{
			Text:       "Hello!",
			Thinking:   "Need a short greeting.",
			StopReason: llm.StopMaxTokens,
			Usage:      llm.Usage{InputTokens: 80, OutputTokens: 16, ContextWindow: 128000},
		},
		deltas: []llm.Delta{{Thinking: "Need a short"}, {Thinking: " greeting."}, {Text: "Hello!"}},
	}, {
		name: "text, then a usage-only final chunk",
		file: "text.sse",
		want: &llm.Response{
			Text:       "Hello, world.",
			StopReason: llm.StopEndTurn,
			Usage:      llm.Usage{InputTokens: 19, OutputTokens: 4, ContextWindow: 128000},
		},
		deltas: []llm.Delta{{Text: "Hello"}, {Text: ", world."}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, reply{file: tt.file})
			resp, deltas, err := collect(t, newModel(s, &sleeps{}), simpleRequest)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, resp); diff != "" {
				t.Errorf("response (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.deltas, deltas); diff != "" {
				t.Errorf("deltas (-want +got):\n%s", diff)
			}
			if s.count() != 1 {
				t.Errorf("%d requests, want 1", s.count())
			}
		})
	}
}

// A server that ignores "stream" and answers with one JSON document is
// read all the same; a JSON error with status 200 says its message.
func TestModel_Stream_notStreamed(t *testing.T) {
	jsonType := map[string]string{"Content-Type": "application/json; charset=utf-8"}
	s := newServer(t, reply{header: jsonType, file: "not_streamed.json"})
	resp, deltas, err := collect(t, newModel(s, &sleeps{}), simpleRequest)
	if err != nil {
		t.Fatal(err)
	}
	want := &llm.Response{
		Text:       "Reading it.",
		ToolCalls:  []llm.ToolCall{{ID: "call_9", Name: "read_file", Arguments: json.RawMessage(`{"path":"a.go"}`)}},
		StopReason: llm.StopToolUse,
		Usage:      llm.Usage{InputTokens: 50, OutputTokens: 12, ContextWindow: 128000},
	}
	if diff := cmp.Diff(want, resp); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}
	if len(deltas) != 1 {
		t.Errorf("deltas %v", deltas)
	}

	s = newServer(t, reply{header: jsonType, body: `{"error": {"message": "Upstream model is not available for your plan", "code": 403}}`})
	_, _, err = collect(t, newModel(s, &sleeps{}), simpleRequest)
	if err == nil || !strings.Contains(err.Error(), "Upstream model is not available for your plan") || s.count() != 1 {
		t.Errorf("error %v after %d requests", err, s.count())
	}
}

func TestModel_Stream_request(t *testing.T) {
	s := newServer(t, reply{file: "text.sse"})
	m := newModel(s, &sleeps{})
	req := &llm.Request{
		System: "You review code.",
		Messages: []llm.Message{
			{Role: llm.RoleUser, Text: "Is auth safe?"},
			{Role: llm.RoleAssistant, Text: "Reading.", Thinking: "not sent back", ToolCalls: []llm.ToolCall{
				{ID: "call_1", Name: "read_file", Arguments: json.RawMessage(`{"path":"auth.go"}`)},
				{ID: "call_2", Name: "list_files"},
			}},
			{Role: llm.RoleTool, ToolCallID: "call_1", ToolName: "read_file", Text: "package auth"},
			{Role: llm.RoleTool, ToolCallID: "call_2", ToolName: "list_files", Text: "no such directory", IsError: true},
			{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "call_3", Name: "done", Arguments: json.RawMessage(`{}`)}}},
			{Role: llm.RoleTool, ToolCallID: "call_3", ToolName: "done", Text: "ok"},
		},
		Tools: []llm.ToolSpec{
			{Name: "read_file", Description: "Read a file.", Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
			{Name: "done", Description: "Finish."},
		},
	}
	if _, _, err := collect(t, m, req); err != nil {
		t.Fatal(err)
	}
	got := s.requests[0]
	if got.path != "/v1/chat/completions" {
		t.Errorf("path %q", got.path)
	}
	for k, want := range map[string]string{
		"Authorization": "Bearer " + testKey,
		"Content-Type":  "application/json",
		"Accept":        "text/event-stream",
		"Http-Referer":  "https://example.com/coda",
		"X-Title":       "coda",
	} {
		if v := got.header.Get(k); v != want {
			t.Errorf("header %s = %q, want %q", k, v, want)
		}
	}
	want := `{
	"model": "gpt-4o",
	"messages": [
		{"role": "system", "content": "You review code."},
		{"role": "user", "content": "Is auth safe?"},
		{"role": "assistant", "content": "Reading.", "tool_calls": [
			{"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"auth.go\"}"}},
			{"id": "call_2", "type": "function", "function": {"name": "list_files", "arguments": "{}"}}
		]},
		{"role": "tool", "content": "package auth", "tool_call_id": "call_1"},
		{"role": "tool", "content": "Error: no such directory", "tool_call_id": "call_2"},
		{"role": "assistant", "content": null, "tool_calls": [
			{"id": "call_3", "type": "function", "function": {"name": "done", "arguments": "{}"}}
		]},
		{"role": "tool", "content": "ok", "tool_call_id": "call_3"}
	],
	"tools": [
		{"type": "function", "function": {"name": "read_file", "description": "Read a file.",
			"parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}},
		{"type": "function", "function": {"name": "done", "description": "Finish.",
			"parameters": {"type": "object", "properties": {}}}}
	],
	"stream": true,
	"stream_options": {"include_usage": true}
}`
	var gotV, wantV any
	if err := json.Unmarshal(got.body, &gotV); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(want), &wantV); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantV, gotV); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
}

func TestModel_Stream_maxTokens(t *testing.T) {
	for _, tt := range []struct {
		base, field string
	}{
		{"https://api.openai.com/v1", "max_completion_tokens"},
		{"http://localhost:11434/v1", "max_tokens"},
	} {
		m := New("m", Options{BaseURL: tt.base, MaxTokens: 1000})
		body, _, err := m.encode(simpleRequest)
		if err != nil {
			t.Fatal(err)
		}
		var v map[string]any
		json.Unmarshal(body, &v)
		if v[tt.field] != 1000.0 || len(v) != 5 {
			t.Errorf("%s: body %s, want %s = 1000", tt.base, body, tt.field)
		}
	}
}

func TestModel_Stream_failures(t *testing.T) {
	errBody := `{"error":{"message":"Incorrect API key provided: ` + testKey + `. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`
	tests := []struct {
		name     string
		replies  []reply
		requests int
		sleeps   []time.Duration // exact waits; nil: only their count is checked
		nsleeps  int
		wantErr  string // substring; "" means success
		is       error
	}{{
		name: "429 with Retry-After, then success",
		replies: []reply{
			{status: 429, header: map[string]string{"Retry-After": "7"}, body: `{"error":{"message":"Rate limit reached for gpt-4o","type":"requests","code":"rate_limit_exceeded"}}`},
			{file: "text.sse"},
		},
		requests: 2,
		sleeps:   []time.Duration{7 * time.Second},
	}, {
		name:     "500 four times, then failure",
		replies:  []reply{{status: 500, body: `{"error":{"message":"The server had an error while processing your request.","type":"server_error"}}`}},
		requests: 4,
		nsleeps:  3,
		wantErr:  "HTTP 500 Internal Server Error: The server had an error while processing your request. (gave up after 4 tries)",
	}, {
		name:     "401 fails at once with the provider's message and no key",
		replies:  []reply{{status: 401, body: errBody}},
		requests: 1,
		wantErr:  "openai:gpt-4o: HTTP 401 Unauthorized: Incorrect API key provided: [redacted]. You can find",
	}, {
		name:     "404 model not found is unavailable",
		replies:  []reply{{status: 404, body: `{"error":{"message":"model \"llama9\" not found, try pulling it first","type":"api_error","param":null,"code":null}}`}},
		requests: 1,
		wantErr:  `HTTP 404 Not Found: model "llama9" not found, try pulling it first`,
		is:       llm.ErrModelUnavailable,
	}, {
		name:     "400 fails at once",
		replies:  []reply{{status: 400, body: `{"error":{"message":"Invalid 'messages[1].content': string too long.","type":"invalid_request_error"}}`}},
		requests: 1,
		wantErr:  "HTTP 400 Bad Request: Invalid 'messages[1].content': string too long.",
	}, {
		// Recorded bodies of servers whose model cannot take tools: the
		// error wraps llm.ErrToolsUnsupported and is never retried,
		// llama.cpp's 500 included (the engine calls again without tools).
		name:     "Ollama: the model does not support tools",
		replies:  []reply{{status: 400, header: map[string]string{"Content-Type": "application/json"}, file: "ollama_no_tools.json"}},
		requests: 1,
		wantErr:  "openai:gpt-4o: HTTP 400 Bad Request: registry.ollama.ai/library/gemma3:4b does not support tools",
		is:       llm.ErrToolsUnsupported,
	}, {
		name:     "llama.cpp without --jinja",
		replies:  []reply{{status: 500, file: "llamacpp_no_jinja.json"}},
		requests: 1,
		wantErr:  "HTTP 500 Internal Server Error: tools param requires --jinja flag",
		is:       llm.ErrToolsUnsupported,
	}, {
		name:     "vLLM without auto tool choice",
		replies:  []reply{{status: 400, file: "vllm_no_auto_tool_choice.json"}},
		requests: 1,
		wantErr:  `HTTP 400 Bad Request: "auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set`,
		is:       llm.ErrToolsUnsupported,
	}, {
		name:     "an error in the stream before anything was streamed is retried",
		replies:  []reply{{file: "early_error.sse"}, {file: "text.sse"}},
		requests: 2,
		nsleeps:  1,
	}, {
		name:     "a non-retryable error in the stream fails at once",
		replies:  []reply{{file: "bad_request_error.sse"}},
		requests: 1,
		wantErr:  "the server reported an error in the stream: Invalid schema for function 'grep'",
	}, {
		name:     "a mid-stream error after text was streamed is not retried",
		replies:  []reply{{file: "midstream_error.sse"}, {file: "text.sse"}},
		requests: 1,
		wantErr:  "the reply broke off after it had begun: the server reported an error in the stream: Provider disconnected unexpectedly",
	}, {
		name:     "a stream cut short before anything was streamed is retried",
		replies:  []reply{{file: "truncated.sse"}, {file: "text.sse"}},
		requests: 2,
		nsleeps:  1,
	}, {
		name:     "529 overloaded, Retry-After longer than the policy allows",
		replies:  []reply{{status: 529, header: map[string]string{"Retry-After": "3600"}, body: `{"error":{"message":"overloaded"}}`}},
		requests: 1,
		wantErr:  "the server asked to wait 1h0m0s",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, tt.replies...)
			sl := &sleeps{}
			resp, deltas, err := collect(t, newModel(s, sl), simpleRequest)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if resp.Text != "Hello, world." || len(deltas) != 2 {
					t.Errorf("response %+v, deltas %v", resp, deltas)
				}
			} else {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want it to contain %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), testKey) {
					t.Errorf("the key is in the error: %v", err)
				}
				if tt.is != nil && !errors.Is(err, tt.is) {
					t.Errorf("error %v is not %v", err, tt.is)
				}
				if tt.is == nil && errors.Is(err, llm.ErrModelUnavailable) {
					t.Errorf("error %v says the model is unavailable", err)
				}
				if tt.is != llm.ErrToolsUnsupported && errors.Is(err, llm.ErrToolsUnsupported) {
					t.Errorf("error %v says the model cannot take tools", err)
				}
			}
			if s.count() != tt.requests {
				t.Errorf("%d requests, want %d", s.count(), tt.requests)
			}
			if tt.sleeps != nil {
				if diff := cmp.Diff(tt.sleeps, sl.d); diff != "" {
					t.Errorf("waits (-want +got):\n%s", diff)
				}
			} else if len(sl.d) != tt.nsleeps {
				t.Errorf("waits %v, want %d of them", sl.d, tt.nsleeps)
			}
		})
	}
}

// A cancelled context aborts the request at once, mid-stream, and the
// error says cancelled.
func TestModel_Stream_cancel(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"choices":[{"index":0,"delta":{"content":"Thinking"}}]}`+"\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	m := New("m", Options{BaseURL: srv.URL, Client: srv.Client()})
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := m.Stream(ctx, simpleRequest, func(d llm.Delta) error {
			cancel()
			return nil
		})
		errc <- err
	}()
	// The server holds the reply open: only the cancel can end the call.
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("error %v, want context.Canceled", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Stream did not return after its context was cancelled")
	}
}

// A server that says nothing for longer than Timeout is given up on, and
// the error says why.
func TestModel_Stream_timeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	sl := &sleeps{}
	m := New("m", Options{BaseURL: srv.URL, Client: srv.Client(), Timeout: 50 * time.Millisecond, Retry: sse.Retry{Tries: 2, Sleep: sl.sleep}})
	_, err := m.Stream(context.Background(), simpleRequest, func(llm.Delta) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "no reply from the server for 50ms (gave up after 2 tries)") {
		t.Fatalf("error %v", err)
	}
}

// An error from onDelta stops the stream and comes back as is.
func TestModel_Stream_onDeltaError(t *testing.T) {
	s := newServer(t, reply{file: "text.sse"})
	stop := errors.New("stop")
	_, err := newModel(s, &sleeps{}).Stream(context.Background(), simpleRequest, func(llm.Delta) error { return stop })
	if !errors.Is(err, stop) {
		t.Fatalf("error %v", err)
	}
	if s.count() != 1 {
		t.Errorf("%d requests", s.count())
	}
}

func TestModel_Name(t *testing.T) {
	if n := New("gpt-5.1", Options{}).Name(); n != "openai:gpt-5.1" {
		t.Errorf("Name() = %q", n)
	}
	if n := New("llama3.1", Options{Name: "ollama:llama3.1"}).Name(); n != "ollama:llama3.1" {
		t.Errorf("Name() = %q", n)
	}
}

// A stream labelled application/json (as some gateways label it) is read
// as the event stream it is, not refused as "not JSON".
func TestModel_Stream_sseLabelledJSON(t *testing.T) {
	s := newServer(t, reply{header: map[string]string{"Content-Type": "application/json"}, file: "text_parallel_tools.sse"})
	want, _, err := collect(t, newModel(newServer(t, reply{file: "text_parallel_tools.sse"}), &sleeps{}), simpleRequest)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := collect(t, newModel(s, &sleeps{}), simpleRequest)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" || len(got.ToolCalls) == 0 {
		t.Errorf("response (-as text/event-stream +as application/json):\n%s", diff)
	}
}

// An API key in an error reply is masked before the reply is shortened:
// wherever it falls, no piece of it reaches the error.
func TestModel_Stream_keyInErrorAtEveryOffset(t *testing.T) {
	const key = "sk-proj-Zq8RrT2vLx9PmW4kN7bH3cJ5dF6gA1s"
	var mu sync.Mutex
	body := ""
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		b := body
		mu.Unlock()
		if strings.HasPrefix(b, "data:") {
			w.Header().Set("Content-Type", "text/event-stream")
		} else {
			w.WriteHeader(http.StatusUnauthorized)
		}
		io.WriteString(w, b)
	}))
	defer srv.Close()
	m := New("gpt-4o", Options{BaseURL: srv.URL, APIKey: key, Client: srv.Client(), Retry: sse.Retry{Tries: 1}})
	for off := 0; off <= 600; off++ {
		pad := strings.Repeat("x", off)
		for _, b := range []string{
			pad + key + " was refused",
			`{"detail":"` + pad + key + `"}`,
			`{"error":{"message":"` + pad + key + `"}}`,
			`data: {"error":{"message":"` + pad + key + `"}}` + "\n\n",
		} {
			mu.Lock()
			body = b
			mu.Unlock()
			_, err := m.Stream(context.Background(), simpleRequest, func(llm.Delta) error { return nil })
			if err == nil {
				t.Fatalf("no error for %q", b)
			}
			if p := leakedPiece(err.Error(), key); p != "" {
				t.Fatalf("key at %d: %q of it is in the error %q", off, p, err)
			}
		}
	}
}

// leakedPiece is a piece of at least 8 characters of key found in s, or "".
func leakedPiece(s, key string) string {
	for i := 0; i+8 <= len(key); i++ {
		if strings.Contains(s, key[i:i+8]) {
			return key[i : i+8]
		}
	}
	return ""
}
