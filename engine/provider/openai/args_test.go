package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/provider/sse"
)

// decodePieces is what writeJSONPieces gives for raw.
func decodePieces(raw []byte, size int) string {
	a := llm.ArgsBuffer{Name: "x"}
	writeJSONPieces(&a, raw, size)
	if a.Len() == 0 {
		return ""
	}
	return string(a.ToolCall("c").Arguments)
}

// A JSON string decoded a piece at a time is the string decoded whole:
// no escape, surrogate pair or UTF-8 character is split.
func TestWriteJSONPieces(t *testing.T) {
	for _, s := range []string{
		strings.Repeat(`a"b\c`+"\n\té€😀", 50),
		strings.Repeat("😀", 40),
		strings.Repeat("é", 41) + "x",
		"x\xff\xfey" + strings.Repeat("\u2028", 9) + "z",
	} {
		raw, _ := json.Marshal(s)
		ascii := []byte(strings.ReplaceAll(strings.ReplaceAll(string(raw), "😀", `\ud83d\ude00`), "é", `\u00e9`))
		var want string
		json.Unmarshal(raw, &want)
		for size := 1; size < 20; size++ {
			if got := decodePieces(raw, size); got != want {
				t.Fatalf("size %d: %q\nwant %q", size, got, want)
			}
			if got := decodePieces(ascii, size); got != want {
				t.Fatalf("escaped, size %d: %q\nwant %q", size, got, want)
			}
		}
	}
	// A high surrogate before another high one is U+FFFD alone; the second
	// pairs with the low one after it (found by FuzzWriteJSONPieces).
	for size := 1; size < 20; size++ {
		if got := decodePieces([]byte(`"\ud800\ud800\udC00"`), size); got != "\uFFFD\U00010000" {
			t.Fatalf("lone high surrogate, size %d: %q", size, got)
		}
	}
	if got := decodePieces([]byte(`"unterminated`+strings.Repeat("x", 100)), 8); got != "" {
		t.Errorf("a broken string gave %q", got)
	}
}

func FuzzWriteJSONPieces(f *testing.F) {
	f.Add("a\"b\\c\né€😀", 3)
	f.Add(`\ud83d\ude00`, 1)
	f.Fuzz(func(t *testing.T, s string, size int) {
		size = 1 + abs(size)%32
		for _, raw := range [][]byte{mustMarshal(s), []byte(`"` + s + `"`)} {
			var want string
			if json.Unmarshal(raw, &want) != nil || strings.TrimSpace(want) != want || want == "" || want == "null" {
				continue // not a string, or one ToolCall would trim
			}
			if got := decodePieces(raw, size); got != want {
				t.Fatalf("size %d, raw %q: %q, want %q", size, raw, got, want)
			}
		}
	})
}

func mustMarshal(s string) []byte { b, _ := json.Marshal(s); return b }

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// argsServer streams one call of name whose arguments are a content string
// of size bytes: in deltas of piece bytes, or in one chunk when piece is 0
// (as Ollama sends calls). The body is written as it is made, so the
// server holds none of it.
func argsServer(t testing.TB, name string, size, piece int) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"function\":{\"name\":%q,\"arguments\":\"{\\\"content\\\": \\\"\"}}]}}]}\n\n", name)
		filler := strings.Repeat("x", 64<<10)
		if piece == 0 {
			w.Write([]byte(`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"`))
			for n := 0; n < size; n += len(filler) {
				w.Write([]byte(filler[:min(len(filler), size-n)]))
			}
			w.Write([]byte("\"}}]}}]}\n\n"))
		} else {
			for n := 0; n < size; n += piece {
				fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":%q}}]}}]}\n\n", filler[:min(piece, size-n)])
			}
		}
		w.Write([]byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"\\\"}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n"))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// Arguments past their cap are cut while they stream, in many deltas or in
// one chunk: the call keeps a prefix and the count of the rest.
func TestStream_oversizedArguments(t *testing.T) {
	for _, tt := range []struct {
		name        string
		size, piece int
	}{
		{"submit_output", 1 << 20, 4 << 10},
		{"submit_output", 1 << 20, 0},
		{"write_file", 3 << 20, 1000},
		{"write_file", 3 << 20, 0},
	} {
		t.Run(fmt.Sprintf("%s/%d/%d", tt.name, tt.size, tt.piece), func(t *testing.T) {
			srv := argsServer(t, tt.name, tt.size, tt.piece)
			resp, err := New("m", Options{BaseURL: srv.URL}).Stream(context.Background(), &llm.Request{}, func(llm.Delta) error { return nil })
			if err != nil {
				t.Fatal(err)
			}
			tc := resp.ToolCalls[0]
			want := len(`{"content": ""}`) + tt.size
			if tc.Name != tt.name || tc.Dropped == 0 || tc.Size() != want || len(tc.Arguments) > 4<<10 || !utf8.Valid(tc.Arguments) ||
				!strings.HasPrefix(string(tc.Arguments), `{"content": "xxx`) {
				t.Errorf("call %s: kept %d bytes, dropped %d, size %d (want %d)", tc.Name, len(tc.Arguments), tc.Dropped, tc.Size(), want)
			}
		})
	}
}

// A stream that breaks after its text spilled to a file lets the file go
// at once, not when a collection finds the dropped stream.
func TestStream_brokenDiscardsSpill(t *testing.T) {
	var body strings.Builder
	for i := range 10_000 {
		fmt.Fprintf(&body, `data: {"choices":[{"index":0,"delta":{"content":"chunk %06d of the streamed reply text.. "}}]}`+"\n\n", i)
	}
	started := false
	s := &stream{onDelta: func(llm.Delta) error { return nil }, started: &started}
	if _, err := s.read(sse.NewReader(strings.NewReader(body.String()))); err == nil {
		t.Fatal("a stream without its end read as whole")
	}
	if s.text.String() != "" {
		t.Error("the broken stream's text is kept")
	}
}

// A server that never stops starting tool calls (chat completions) or
// output items (Responses) is cut off at sse.MaxToolCalls: each is held
// until the reply ends, so the reply would otherwise grow without bound.
func TestStream_toolCallsBounded(t *testing.T) {
	n := sse.MaxToolCalls + 1
	var chat strings.Builder
	for i := range n {
		fmt.Fprintf(&chat, `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":%d,"id":"call_%d","type":"function","function":{"name":"read_file","arguments":"{}"}}]}}]}`+"\n\n", i, i)
	}
	chat.WriteString(`data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\ndata: [DONE]\n\n")
	started := false
	s := &stream{onDelta: func(llm.Delta) error { return nil }, started: &started}
	if _, err := s.read(sse.NewReader(strings.NewReader(chat.String()))); err == nil || !strings.Contains(err.Error(), "more than 4096 tool calls") {
		t.Errorf("chat completions, %d calls: %v", n, err)
	}

	var resp strings.Builder
	for i := range n {
		fmt.Fprintf(&resp, "event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"output_index\":%d,\"item\":{\"id\":\"fc_%d\",\"type\":\"function_call\",\"call_id\":\"call_%d\",\"name\":\"read_file\",\"arguments\":\"\"}}\n\n", i, i, i)
	}
	resp.WriteString("event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"resp_1\",\"status\":\"completed\",\"output\":[]}}\n\n")
	rs := &rstream{onDelta: func(llm.Delta) error { return nil }, started: &started}
	if _, err := rs.read(sse.NewReader(strings.NewReader(resp.String()))); err == nil || !strings.Contains(err.Error(), "more than 4096 output items") {
		t.Errorf("Responses, %d items: %v", n, err)
	}
}
