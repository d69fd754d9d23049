package anthropic

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

const testKey = "sk-ant-api03-test-0123456789"

type reply struct {
	status      int
	contentType string
	file        string
	body        string
}

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
		if rep.contentType == "" {
			rep.contentType = "text/event-stream; charset=utf-8"
		}
		w.Header().Set("Content-Type", rep.contentType)
		if rep.status == 0 {
			rep.status = http.StatusOK
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

func newModel(s *server, waits *int) *Model {
	return New("claude-sonnet-4-5", Options{
		BaseURL:       s.URL,
		APIKey:        testKey,
		Retry:         sse.Retry{Sleep: func(ctx context.Context, d time.Duration) error { *waits++; return nil }},
		Client:        s.Client(),
		ContextWindow: 200000,
	})
}

func collect(t *testing.T, m *Model, req *llm.Request) (*llm.Response, []llm.Delta, error) {
	t.Helper()
	var deltas []llm.Delta
	resp, err := m.Stream(context.Background(), req, func(d llm.Delta) error {
		deltas = append(deltas, d)
		return nil
	})
	return resp, deltas, err
}

var simpleRequest = &llm.Request{System: "Be brief.", Messages: []llm.Message{{Role: llm.RoleUser, Text: "hi"}}}

func TestModel_Stream(t *testing.T) {
	tests := []struct {
		name   string
		file   string
		want   *llm.Response
		deltas []llm.Delta
	}{{
		name: "thinking, text and tool_use with input_json_delta fragments",
		file: "text_tool_thinking.sse",
		want: &llm.Response{
			Text:     "Let me read the login code.",
			Thinking: "The user wants auth checked. Read login.go first.",
			ToolCalls: []llm.ToolCall{
				{ID: "toolu_01T1x1fJ34qAmk2tNTrN7Up6", Name: "read_file", Arguments: json.RawMessage(`{"path": "auth/login.go"}`)},
				{ID: "toolu_01Ab9Xk2Pq7LmN4sRt6Uv8Wy", Name: "list_files", Arguments: json.RawMessage(`{}`)},
			},
			StopReason: llm.StopToolUse,
			Usage:      llm.Usage{InputTokens: 1021 + 2048, OutputTokens: 89, CacheReadTokens: 2048, ContextWindow: 200000},
			// The blocks ride along, the thinking with its signature, to
			// be sent back as they came.
			Replay: json.RawMessage(`{"claude":"claude-sonnet-4-5","blocks":[{"k":"h","n":49,"s":"EqQBCkgIBxABGAIiQL2zVb3hmPq0c+Rk1W1xkOq2gYh4u7Vt0d0jZQ=="},{"k":"t","n":27},{"k":"c"},{"k":"c"}]}`),
		},
		deltas: []llm.Delta{
			{Thinking: "The user wants auth checked."}, {Thinking: " Read login.go first."},
			{Text: "Let me read"}, {Text: " the login code."},
		},
	}, {
		name: "text stopped by max_tokens",
		file: "text.sse",
		want: &llm.Response{
			Text:       "Hello, world.",
			StopReason: llm.StopMaxTokens,
			Usage:      llm.Usage{InputTokens: 12, OutputTokens: 6, ContextWindow: 200000},
		},
		deltas: []llm.Delta{{Text: "Hello"}, {Text: ", world."}},
	}, {
		name: "refusal",
		file: "refusal.sse",
		want: &llm.Response{
			Text:       "I can't help with that.",
			StopReason: llm.StopRefusal,
			Refusal:    "I can't help with that.",
			Usage:      llm.Usage{InputTokens: 30, OutputTokens: 9, ContextWindow: 200000},
		},
		deltas: []llm.Delta{{Text: "I can't help with that."}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, reply{file: tt.file})
			var waits int
			resp, deltas, err := collect(t, newModel(s, &waits), simpleRequest)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, resp); diff != "" {
				t.Errorf("response (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.deltas, deltas); diff != "" {
				t.Errorf("deltas (-want +got):\n%s", diff)
			}
		})
	}
}

// A gateway that answers with one JSON message instead of a stream is read
// all the same.
func TestModel_Stream_notStreamed(t *testing.T) {
	s := newServer(t, reply{contentType: "application/json", body: `{
  "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
  "content": [
    {"type": "thinking", "thinking": "Look first.", "signature": "sig1"},
    {"type": "text", "text": "Reading."},
    {"type": "tool_use", "id": "toolu_9", "name": "read_file", "input": {"path": "a.go"}}
  ],
  "stop_reason": "tool_use", "stop_sequence": null,
  "usage": {"input_tokens": 40, "output_tokens": 20}
}`})
	var waits int
	resp, _, err := collect(t, newModel(s, &waits), simpleRequest)
	if err != nil {
		t.Fatal(err)
	}
	want := &llm.Response{
		Text: "Reading.", Thinking: "Look first.",
		ToolCalls:  []llm.ToolCall{{ID: "toolu_9", Name: "read_file", Arguments: json.RawMessage(`{"path":"a.go"}`)}},
		StopReason: llm.StopToolUse,
		Usage:      llm.Usage{InputTokens: 40, OutputTokens: 20, ContextWindow: 200000},
		Replay:     json.RawMessage(`{"claude":"claude-sonnet-4-5","blocks":[{"k":"h","n":11,"s":"sig1"},{"k":"t","n":8},{"k":"c"}]}`),
	}
	if diff := cmp.Diff(want, resp); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}
}

// The request: system at the top level, tool results as tool_result blocks
// merged into one user message, thinking sent back with its signature,
// cache breakpoints on the system prompt and the last two messages, and
// room to think (max_tokens raised, none having been configured). The
// tool loop it continues is a message with no signed thinking to send
// back, which the API refuses with thinking on: the call goes without it
// (replay.go, loopThinking), where the first call thought with its
// configured budget.
func TestModel_Stream_request(t *testing.T) {
	s := newServer(t, reply{file: "text_tool_thinking.sse"}, reply{file: "text.sse"})
	var waits int
	m := newModel(s, &waits)
	m.opts.ThinkingBudget = 2048
	first, _, err := collect(t, m, &llm.Request{System: "You review code.", Messages: []llm.Message{{Role: llm.RoleUser, Text: "Is auth safe?"}}})
	if err != nil {
		t.Fatal(err)
	}
	req := &llm.Request{
		System: "You review code.",
		Messages: []llm.Message{
			{Role: llm.RoleUser, Text: "Is auth safe?"},
			{Role: llm.RoleAssistant, Text: first.Text, Thinking: first.Thinking, ToolCalls: first.ToolCalls, Replay: first.Replay},
			{Role: llm.RoleTool, ToolCallID: "toolu_01T1x1fJ34qAmk2tNTrN7Up6", ToolName: "read_file", Text: "package auth"},
			{Role: llm.RoleTool, ToolCallID: "toolu_01Ab9Xk2Pq7LmN4sRt6Uv8Wy", ToolName: "list_files", Text: "no such directory", IsError: true},
			{Role: llm.RoleUser, Text: "Also check the tests."},
			{Role: llm.RoleAssistant, Thinking: "unsigned, not sent", ToolCalls: []llm.ToolCall{{ID: "toolu_3", Name: "done", Arguments: json.RawMessage(`{"oops`)}}},
			{Role: llm.RoleTool, ToolCallID: "toolu_3", ToolName: "done"},
		},
		Tools: []llm.ToolSpec{
			{Name: "read_file", Description: "Read a file.", Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
			{Name: "done", Description: "Finish."},
		},
	}
	if _, _, err := collect(t, m, req); err != nil {
		t.Fatal(err)
	}
	// The first call, which continues no tool loop, thinks with the
	// budget configured.
	var firstBody struct {
		Thinking json.RawMessage `json:"thinking"`
	}
	if err := json.Unmarshal(s.requests[0].body, &firstBody); err != nil || string(firstBody.Thinking) != `{"type":"enabled","budget_tokens":2048}` {
		t.Errorf("the first call's thinking = %s (%v), want the budget of 2048", firstBody.Thinking, err)
	}
	got := s.requests[1]
	if got.path != "/v1/messages" {
		t.Errorf("path %q", got.path)
	}
	for k, want := range map[string]string{"X-Api-Key": testKey, "Anthropic-Version": "2023-06-01", "Content-Type": "application/json"} {
		if v := got.header.Get(k); v != want {
			t.Errorf("header %s = %q, want %q", k, v, want)
		}
	}
	if v := got.header.Get("Authorization"); v != "" {
		t.Errorf("Authorization header %q sent", v)
	}
	want := `{
	"model": "claude-sonnet-4-5",
	"max_tokens": 32000,
	"system": [{"type": "text", "text": "You review code.", "cache_control": {"type": "ephemeral"}}],
	"stream": true,
	"messages": [
		{"role": "user", "content": [{"type": "text", "text": "Is auth safe?"}]},
		{"role": "assistant", "content": [
			{"type": "thinking", "thinking": "The user wants auth checked. Read login.go first.", "signature": "EqQBCkgIBxABGAIiQL2zVb3hmPq0c+Rk1W1xkOq2gYh4u7Vt0d0jZQ=="},
			{"type": "text", "text": "Let me read the login code."},
			{"type": "tool_use", "id": "toolu_01T1x1fJ34qAmk2tNTrN7Up6", "name": "read_file", "input": {"path": "auth/login.go"}},
			{"type": "tool_use", "id": "toolu_01Ab9Xk2Pq7LmN4sRt6Uv8Wy", "name": "list_files", "input": {}}
		]},
		{"role": "user", "content": [
			{"type": "tool_result", "tool_use_id": "toolu_01T1x1fJ34qAmk2tNTrN7Up6", "content": "package auth"},
			{"type": "tool_result", "tool_use_id": "toolu_01Ab9Xk2Pq7LmN4sRt6Uv8Wy", "content": "no such directory", "is_error": true},
			{"type": "text", "text": "Also check the tests."}
		]},
		{"role": "assistant", "content": [
			{"type": "tool_use", "id": "toolu_3", "name": "done", "input": {}, "cache_control": {"type": "ephemeral"}}
		]},
		{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_3", "cache_control": {"type": "ephemeral"}}]}
	],
	"tools": [
		{"name": "read_file", "description": "Read a file.", "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}},
		{"name": "done", "description": "Finish.", "input_schema": {"type": "object", "properties": {}}}
	]
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

func TestModel_Stream_failures(t *testing.T) {
	tests := []struct {
		name     string
		replies  []reply
		requests int
		waits    int
		wantErr  string
		is       error
	}{{
		name:     "overloaded_error event before anything was streamed is retried",
		replies:  []reply{{file: "overloaded.sse"}, {file: "text.sse"}},
		requests: 2,
		waits:    1,
	}, {
		name:     "overloaded_error event after text is a clear error",
		replies:  []reply{{file: "overloaded_after_text.sse"}, {file: "text.sse"}},
		requests: 1,
		wantErr:  "the reply broke off after it had begun: the server reported an error in the stream: overloaded_error: Overloaded",
	}, {
		name:     "529 overloaded is retried",
		replies:  []reply{{status: 529, body: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`}, {file: "text.sse"}},
		requests: 2,
		waits:    1,
	}, {
		name:     "overloaded four times",
		replies:  []reply{{file: "overloaded.sse"}},
		requests: 4,
		waits:    3,
		wantErr:  "anthropic:claude-sonnet-4-5: the server reported an error in the stream: overloaded_error: Overloaded (gave up after 4 tries)",
	}, {
		name:     "401",
		replies:  []reply{{status: 401, body: `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"},"request_id":"req_011CVd"}`}},
		requests: 1,
		wantErr:  "HTTP 401 Unauthorized: invalid x-api-key",
	}, {
		name:     "404 model not found",
		replies:  []reply{{status: 404, body: `{"type":"error","error":{"type":"not_found_error","message":"model: claude-sonnet-9"},"request_id":"req_011CVe"}`}},
		requests: 1,
		wantErr:  "HTTP 404 Not Found: model: claude-sonnet-9",
		is:       llm.ErrModelUnavailable,
	}, {
		name:     "an error event that is not retryable",
		replies:  []reply{{body: "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"prompt is too long: 210000 tokens > 200000 maximum\"}}\n\n"}},
		requests: 1,
		wantErr:  "invalid_request_error: prompt is too long",
	}, {
		name:     "a block index out of range",
		replies:  []reply{{body: "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":2000000000,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"}},
		requests: 1,
		wantErr:  "a stream event names content block 2000000000",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, tt.replies...)
			var waits int
			resp, deltas, err := collect(t, newModel(s, &waits), simpleRequest)
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
				if tt.is != nil && !errors.Is(err, tt.is) {
					t.Errorf("error %v is not %v", err, tt.is)
				}
				if tt.is == nil && errors.Is(err, llm.ErrModelUnavailable) {
					t.Errorf("error %v says the model is unavailable", err)
				}
			}
			if s.count() != tt.requests || waits != tt.waits {
				t.Errorf("%d requests, %d waits; want %d, %d", s.count(), waits, tt.requests, tt.waits)
			}
		})
	}
}

func TestModel_Stream_cancel(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\n")
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
		_, err := m.Stream(ctx, simpleRequest, func(llm.Delta) error { cancel(); return nil })
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

// A stream labelled application/json is read as the event stream it is.
func TestModel_Stream_sseLabelledJSON(t *testing.T) {
	var waits int
	want, _, err := collect(t, newModel(newServer(t, reply{file: "text_tool_thinking.sse"}), &waits), simpleRequest)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := collect(t, newModel(newServer(t, reply{contentType: "application/json", file: "text_tool_thinking.sse"}), &waits), simpleRequest)
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
	const key = "sk-ant-api03-Zq8RrT2vLx9PmW4kN7bH3cJ5dF6gA1s"
	var mu sync.Mutex
	body := ""
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		b := body
		mu.Unlock()
		if strings.HasPrefix(b, "event:") {
			w.Header().Set("Content-Type", "text/event-stream")
		} else {
			w.WriteHeader(http.StatusUnauthorized)
		}
		io.WriteString(w, b)
	}))
	defer srv.Close()
	m := New("claude-sonnet-4-5", Options{BaseURL: srv.URL, APIKey: key, Client: srv.Client(), Retry: sse.Retry{Tries: 1}})
	for off := 0; off <= 600; off++ {
		pad := strings.Repeat("x", off)
		for _, b := range []string{
			pad + key + " was refused",
			`{"detail":"` + pad + key + `"}`,
			`{"type":"error","error":{"type":"authentication_error","message":"` + pad + key + `"}}`,
			"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"" + pad + key + "\"}}\n\n",
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
