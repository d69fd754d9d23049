package gemini

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

	"github.com/google/go-cmp/cmp"

	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/provider/gemini/geminitest"
	"github.com/coda-acp/coda/engine/provider/sse"
)

// The recorded bodies in testdata follow the shapes of Google's reference
// and guides: GenerateContentResponse and its streaming
// (https://ai.google.dev/api/generate-content), thought summaries
// (https://ai.google.dev/gemini-api/docs/thinking#summaries), signatures on
// function calls and on a stream's last, empty, text part
// (https://ai.google.dev/gemini-api/docs/thought-signatures), finish
// reasons and prompt feedback, and the error body
// (https://ai.google.dev/gemini-api/docs/troubleshooting).

const testKey = "AIzaSyTestKey-0123456789abcdefghij"

type reply struct {
	status      int
	contentType string
	file        string
	body        string
}

// server answers each request with the next reply (the last one again
// when they run out), recording what it was sent.
type server struct {
	*httptest.Server
	mu       sync.Mutex
	replies  []reply
	requests []recorded
}

type recorded struct {
	header http.Header
	url    string
	body   []byte
}

func newServer(t *testing.T, replies ...reply) *server {
	t.Helper()
	s := &server{replies: replies}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.requests = append(s.requests, recorded{header: r.Header.Clone(), url: r.URL.String(), body: body})
		rep := s.replies[0]
		if len(s.replies) > 1 {
			s.replies = s.replies[1:]
		}
		s.mu.Unlock()
		if rep.contentType == "" {
			rep.contentType = "text/event-stream"
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

func noWait(waits *int) sse.Retry {
	return sse.Retry{Sleep: func(ctx context.Context, d time.Duration) error { *waits++; return nil }}
}

func newModel(url string, model string, opts Options) *Model {
	opts.BaseURL = url + "/v1beta"
	if opts.APIKey == "" {
		opts.APIKey = testKey
	}
	if opts.Retry.Sleep == nil {
		opts.Retry.Sleep = func(context.Context, time.Duration) error { return nil }
	}
	return New(model, opts)
}

func collect(m *Model, req *llm.Request) (*llm.Response, []llm.Delta, error) {
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
		name        string
		file        string
		contentType string
		want        *llm.Response
		deltas      []llm.Delta
	}{{
		name: "text whose signature comes in an empty last part",
		file: "text.sse",
		want: &llm.Response{
			Text:       "The capital of France is Paris.",
			StopReason: llm.StopEndTurn,
			Usage:      llm.Usage{InputTokens: 9, OutputTokens: 8 + 124, ReasoningTokens: 124, ContextWindow: 1048576},
			Replay:     json.RawMessage(`{"gemini":"gemini-3-flash-preview","parts":[{"k":"t","n":31},{"k":"t","s":"EjQKMgEMOdbHsbB1yE9n0Wlq3Qw0bJhD6Xz2n8Jq6cQ="}]}`),
		},
		deltas: []llm.Delta{{Text: "The capital"}, {Text: " of France is Paris."}},
	}, {
		name: "thought summaries, text and parallel calls, the first signed",
		file: "function_call.sse",
		want: &llm.Response{
			Text:     "Let me read the login code.",
			Thinking: "**Checking the login code**\n\nThe user wants auth checked. I will read login.go and list the files.",
			ToolCalls: []llm.ToolCall{
				{ID: "gemini-call-1", Name: "read_file", Arguments: json.RawMessage(`{"path": "auth/login.go"}`)},
				{ID: "gemini-call-2", Name: "list_files", Arguments: json.RawMessage(`{}`)},
			},
			StopReason: llm.StopToolUse,
			Usage:      llm.Usage{InputTokens: 1310, OutputTokens: 41 + 202, CacheReadTokens: 1024, ReasoningTokens: 202, ContextWindow: 1048576},
			Replay:     json.RawMessage(`{"gemini":"gemini-3-flash-preview","parts":[{"k":"h","n":98},{"k":"t","n":27},{"k":"c","s":"CiQBjz1rX3dQm8eXn0W1JvK2h4u7Vt0d0jZQpL5sN9aB6cD1eF0="},{"k":"c"}]}`),
		},
		deltas: []llm.Delta{
			{Thinking: "**Checking the login code**\n\nThe user wants auth checked."},
			{Thinking: " I will read login.go and list the files."},
			{Text: "Let me read the login code."},
		},
	}, {
		name: "cut by the token limit",
		file: "max_tokens.sse",
		want: &llm.Response{
			Text:       "Here is the first half of the answer",
			StopReason: llm.StopMaxTokens,
			Usage:      llm.Usage{InputTokens: 12, OutputTokens: 8, ContextWindow: 1048576},
		},
		deltas: []llm.Delta{{Text: "Here is the first half of"}, {Text: " the answer"}},
	}, {
		name: "withheld by the safety filters",
		file: "safety.sse",
		want: &llm.Response{
			Text:       "I can",
			StopReason: llm.StopRefusal,
			Refusal:    "Gemini withheld the reply (SAFETY: its safety filters)",
			Usage:      llm.Usage{InputTokens: 20, OutputTokens: 2, ContextWindow: 1048576},
		},
		deltas: []llm.Delta{{Text: "I can"}},
	}, {
		name: "a blocked prompt",
		file: "prompt_blocked.sse",
		want: &llm.Response{
			StopReason: llm.StopRefusal,
			Refusal:    "Gemini blocked the prompt (PROHIBITED_CONTENT)",
			Usage:      llm.Usage{InputTokens: 31, ContextWindow: 1048576},
		},
	}, {
		name:        "the chunks as one JSON array, from a server that dropped alt=sse",
		file:        "not_streamed.json",
		contentType: "application/json",
		want: &llm.Response{
			Text:       "Hello, world.",
			StopReason: llm.StopEndTurn,
			Usage:      llm.Usage{InputTokens: 4, OutputTokens: 4, ContextWindow: 1048576},
		},
		deltas: []llm.Delta{{Text: "Hello"}, {Text: ", world."}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, reply{file: tt.file, contentType: tt.contentType})
			m := newModel(s.URL, "gemini-3-flash-preview", Options{ContextWindow: 1048576})
			got, deltas, err := collect(m, simpleRequest)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("response (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.deltas, deltas); diff != "" {
				t.Errorf("deltas (-want +got):\n%s", diff)
			}
		})
	}
}

// The request as sent: the URL and header, and a body with every kind of
// content, checked against testdata/request.json, which is written from
// the docs' REST examples (function calling with thought signatures,
// images, structured output, thinking).
func TestModel_Stream_request(t *testing.T) {
	s := newServer(t, reply{file: "text.sse"})
	m := newModel(s.URL, "gemini-3-pro-preview", Options{Thinking: ThinkingLevel, MaxTokens: 8192})
	png := []byte("\x89PNG\r\n\x1a\n")
	req := &llm.Request{
		System: "You review code.",
		Messages: []llm.Message{
			{Role: llm.RoleUser, Text: "Check auth.", Images: []llm.Image{{MIMEType: "image/png", Data: png}}},
			{
				Role:     llm.RoleAssistant,
				Text:     "Let me read the login code.",
				Thinking: "**Checking the login code**\n\nThe user wants auth checked. I will read login.go and list the files.",
				ToolCalls: []llm.ToolCall{
					{ID: "gemini-call-1", Name: "read_file", Arguments: json.RawMessage(`{"path":"auth/login.go"}`)},
					{ID: "fc_2", Name: "list_files", Arguments: json.RawMessage(`{}`)},
				},
				Replay: json.RawMessage(`{"gemini":"gemini-3-pro-preview","parts":[{"k":"h","n":98},{"k":"t","n":27},{"k":"c","s":"CiQBjz1rX3dQm8eXn0W1JvK2h4u7Vt0d0jZQpL5sN9aB6cD1eF0="},{"k":"c"}]}`),
			},
			{Role: llm.RoleTool, ToolCallID: "gemini-call-1", ToolName: "read_file", Text: "package auth"},
			{Role: llm.RoleTool, ToolCallID: "fc_2", ToolName: "list_files", Text: "no such directory", IsError: true},
		},
		Tools: []llm.ToolSpec{
			{Name: "read_file", Description: "Read a file.", Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
			{Name: "submit_output", Description: "Submit the answer.", Schema: json.RawMessage(`{"type":"object","properties":{"content":{"type":"string"}},"required":["content"]}`), Strict: true},
		},
		ToolChoice: "submit_output",
		Effort:     llm.EffortHigh,
		Reply:      &llm.ReplyFormat{Name: "answer", Schema: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}}}`)},
	}
	if _, _, err := collect(m, req); err != nil {
		t.Fatal(err)
	}
	got := s.requests[0]
	if got.url != "/v1beta/models/gemini-3-pro-preview:streamGenerateContent?alt=sse" {
		t.Errorf("URL %s", got.url)
	}
	if k := got.header.Get("X-Goog-Api-Key"); k != testKey || strings.Contains(got.url, testKey) {
		t.Errorf("key header %q, URL %s: the key goes in the header only", k, got.url)
	}
	want, err := os.ReadFile("testdata/request.json")
	if err != nil {
		t.Fatal(err)
	}
	var w, g any
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(got.body, &g); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(w, g); diff != "" {
		t.Errorf("request body (-testdata/request.json +sent):\n%s", diff)
	}
}

// Each effort as thinkingConfig, for each kind of model.
func TestModel_thinking(t *testing.T) {
	tests := []struct {
		style, effort, want string
	}{
		{ThinkingLevel, "", `{"includeThoughts":true}`},
		{ThinkingLevel, "low", `{"includeThoughts":true,"thinkingLevel":"low"}`},
		{ThinkingLevel, "minimal", `{"includeThoughts":true,"thinkingLevel":"minimal"}`},
		{ThinkingLevel, "xhigh", `{"includeThoughts":true,"thinkingLevel":"xhigh"}`},
		{ThinkingLevel, "max", `{"includeThoughts":true,"thinkingLevel":"xhigh"}`},
		{ThinkingLevel, "off", `{"thinkingLevel":"low"}`},
		{ThinkingBudget, "", `{"includeThoughts":true}`},
		{ThinkingBudget, "off", `{"thinkingBudget":0}`},
		{ThinkingBudget, "low", `{"includeThoughts":true,"thinkingBudget":1024}`},
		{ThinkingBudget, "medium", `{"includeThoughts":true,"thinkingBudget":8192}`},
		{ThinkingBudget, "high", `{"includeThoughts":true,"thinkingBudget":24576}`},
		{ThinkingNone, "high", `null`},
		{ThinkingNone, "", `null`},
	}
	for _, tt := range tests {
		m := New("m", Options{Thinking: tt.style})
		got, _ := json.Marshal(m.thinking(tt.effort))
		if string(got) != tt.want {
			t.Errorf("%q at %q: thinkingConfig %s, want %s", tt.style, tt.effort, got, tt.want)
		}
	}
	// The default effort is the request's when it sets none.
	m := New("m", Options{Thinking: ThinkingBudget, Effort: llm.EffortLow})
	b, _ := m.encodeWith(simpleRequest, nil)
	if !strings.Contains(string(b), `"thinkingBudget":1024`) {
		t.Errorf("default effort low not sent: %s", b)
	}
	b, _ = m.encodeWith(&llm.Request{Messages: simpleRequest.Messages, Effort: llm.EffortOff}, nil)
	if !strings.Contains(string(b), `"thinkingBudget":0`) {
		t.Errorf("the request's effort does not win: %s", b)
	}
}

func TestModel_Stream_failures(t *testing.T) {
	const badKey = `{"error": {"code": 400,"message": "API key not valid. Please pass a valid API key.","status": "INVALID_ARGUMENT","details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo","reason": "API_KEY_INVALID","domain": "googleapis.com","metadata": {"service": "generativelanguage.googleapis.com"}}]}}`
	tests := []struct {
		name     string
		replies  []reply
		requests int
		waits    int
		wantErr  string
		is       error
	}{{
		name:     "an overloaded error in the stream before anything was streamed is retried",
		replies:  []reply{{file: "overloaded.sse"}, {file: "max_tokens.sse"}},
		requests: 2,
		waits:    1,
	}, {
		name:     "429 RESOURCE_EXHAUSTED is retried",
		replies:  []reply{{status: 429, body: `{"error": {"code": 429,"message": "Resource has been exhausted (e.g. check quota).","status": "RESOURCE_EXHAUSTED"}}`}, {file: "max_tokens.sse"}},
		requests: 2,
		waits:    1,
	}, {
		name:     "503 four times",
		replies:  []reply{{status: 503, body: `{"error": {"code": 503,"message": "The model is overloaded. Please try again later.","status": "UNAVAILABLE"}}`}},
		requests: 4,
		waits:    3,
		wantErr:  "gemini:gemini-2.5-flash: HTTP 503 Service Unavailable: The model is overloaded. Please try again later. (gave up after 4 tries)",
	}, {
		name:     "a stream that ends before its finish reason is retried, then fails",
		replies:  []reply{{file: "truncated.sse"}},
		requests: 1,
		wantErr:  "the reply broke off after it had begun: the stream ended before the reply was complete",
	}, {
		name:     "an invalid key",
		replies:  []reply{{status: 400, body: badKey}},
		requests: 1,
		wantErr:  "HTTP 400 Bad Request: API key not valid. Please pass a valid API key.",
	}, {
		name:     "403 PERMISSION_DENIED",
		replies:  []reply{{status: 403, body: `{"error": {"code": 403,"message": "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.","status": "PERMISSION_DENIED"}}`}},
		requests: 1,
		wantErr:  "HTTP 403 Forbidden: Method doesn't allow unregistered callers",
	}, {
		name:     "404 model not found",
		replies:  []reply{{status: 404, body: `{"error": {"code": 404,"message": "models/gemini-9 is not found for API version v1beta, or is not supported for generateContent. Call ListModels to see the list of available models and their supported methods.","status": "NOT_FOUND"}}`}},
		requests: 1,
		wantErr:  "HTTP 404 Not Found: models/gemini-9 is not found",
		is:       llm.ErrModelUnavailable,
	}, {
		name:     "an error in the stream that is not worth another try",
		replies:  []reply{{body: "data: {\"error\": {\"code\": 400,\"message\": \"The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).\",\"status\": \"INVALID_ARGUMENT\"}}\n\n"}},
		requests: 1,
		wantErr:  "the server reported an error in the stream: INVALID_ARGUMENT: The input token count (1200000) exceeds",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, tt.replies...)
			var waits int
			m := newModel(s.URL, "gemini-2.5-flash", Options{Retry: noWait(&waits)})
			resp, _, err := collect(m, simpleRequest)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if resp.Text != "Here is the first half of the answer" {
					t.Errorf("response %+v", resp)
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

// A 400 that names a mechanism the request used is a MechanismError, for
// the engine to try a weaker one; the same 400 for a request that did not
// use it is the plain error it is.
func TestModel_Stream_mechanismRefused(t *testing.T) {
	reply := func(msg string) reply {
		b, _ := json.Marshal(map[string]any{"error": map[string]any{"code": 400, "message": msg, "status": "INVALID_ARGUMENT"}})
		return reply{status: 400, body: string(b)}
	}
	shaped := &llm.Request{Messages: simpleRequest.Messages, Reply: &llm.ReplyFormat{Schema: json.RawMessage(`{"type":"object"}`)}}
	forced := &llm.Request{Messages: simpleRequest.Messages, Tools: []llm.ToolSpec{{Name: "submit_output"}}, ToolChoice: "submit_output"}
	tests := []struct {
		req  *llm.Request
		msg  string
		want string // the mechanism; "" for none
	}{
		{shaped, "Function calling with a response mime type: 'application/json' is unsupported", "reply_format"},
		{shaped, "Invalid JSON payload received. Unknown name \"responseJsonSchema\" at 'generation_config': Cannot find field.", "reply_format"},
		{forced, "* GenerateContentRequest.tool_config.function_calling_config.allowed_function_names: only allowed when mode is ANY", "tool_choice"},
		{simpleRequest, "Unknown name \"responseJsonSchema\" at 'generation_config'", ""},
		{shaped, "API key not valid. Please pass a valid API key.", ""},
	}
	for _, tt := range tests {
		s := newServer(t, reply(tt.msg))
		_, _, err := collect(newModel(s.URL, "gemini-2.5-flash", Options{}), tt.req)
		var me *llm.MechanismError
		switch {
		case err == nil:
			t.Errorf("%q: no error", tt.msg)
		case tt.want == "" && errors.As(err, &me):
			t.Errorf("%q: %v is a MechanismError", tt.msg, err)
		case tt.want != "" && (!errors.As(err, &me) || me.Mechanism != tt.want || !errors.Is(err, llm.ErrMechanismRefused)):
			t.Errorf("%q: %v, want a MechanismError for %s", tt.msg, err, tt.want)
		}
		if err != nil && !strings.Contains(err.Error(), "gemini:gemini-2.5-flash") {
			t.Errorf("%v does not name the model", err)
		}
	}
}

func TestModel_Stream_cancel(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, sseChunk([]map[string]any{{"text": "Hi"}}, "", nil))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	m := newModel(srv.URL, "gemini-2.5-flash", Options{})
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := m.Stream(ctx, simpleRequest, func(llm.Delta) error { cancel(); return nil })
		errc <- err
	}()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("error %v, want context.Canceled", err)
		}
	case <-time.After(30 * time.Second): // a hang detector
		t.Fatal("Stream did not return after its context was cancelled")
	}
}

// An API key in an error reply is masked before the reply is shortened:
// wherever it falls, no piece of it reaches the error.
func TestModel_Stream_keyInErrorAtEveryOffset(t *testing.T) {
	const key = "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"
	var mu sync.Mutex
	body := ""
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		b := body
		mu.Unlock()
		if strings.HasPrefix(b, "data:") {
			w.Header().Set("Content-Type", "text/event-stream")
		} else {
			w.WriteHeader(http.StatusBadRequest)
		}
		io.WriteString(w, b)
	}))
	defer srv.Close()
	m := newModel(srv.URL, "gemini-2.5-flash", Options{APIKey: key, Retry: sse.Retry{Tries: 1}})
	for off := 0; off <= 600; off++ {
		pad := strings.Repeat("x", off)
		for _, b := range []string{
			pad + key + " was refused",
			`{"error": {"code": 400,"message": "` + pad + key + `","status": "INVALID_ARGUMENT"}}`,
			`{"error": {"code": 400,"status": "INVALID_ARGUMENT","details": [{"reason": "API_KEY_INVALID","metadata": {"key": "` + pad + key + `"}}]}}`,
			"data: {\"error\": {\"code\": 400,\"message\": \"" + pad + key + "\",\"status\": \"INVALID_ARGUMENT\"}}\n\n",
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

func TestModel_images(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\nrest")
	req := &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Text: "What is this?", Images: []llm.Image{{MIMEType: "image/png", Data: png}}}}}
	for _, noVision := range []bool{false, true} {
		m := New("gemini-2.5-flash", Options{NoVision: noVision})
		b, err := m.encodeWith(req, nil)
		if err != nil {
			t.Fatal(err)
		}
		var r geminitest.Body
		json.Unmarshal(b, &r)
		parts := r.Contents[0].Parts
		if noVision {
			if len(parts) != 1 || parts[0].InlineData != nil || !strings.Contains(*parts[0].Text, "this model cannot see images") {
				t.Errorf("no vision: parts %s", b)
			}
			continue
		}
		if len(parts) != 2 || parts[0].InlineData == nil || parts[0].InlineData.MIMEType != "image/png" || parts[0].InlineData.Data != "iVBORw0KGgpyZXN0" || *parts[1].Text != "What is this?" {
			t.Errorf("vision: parts %s", b)
		}
	}
}
