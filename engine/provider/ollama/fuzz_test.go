package ollama

import (
	"os"
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/provider/sse"
)

// FuzzStream feeds arbitrary bodies to the stream reader: it may fail, but
// not panic, and a reply it accepts has well-formed tool calls.
func FuzzStream(f *testing.F) {
	for _, name := range []string{"chat_stream.ndjson", "chat_thinking_tools.ndjson", "chat_length.ndjson", "chat_error.ndjson"} {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Fuzz(func(t *testing.T, body string) {
		started := false
		s := stream{onDelta: func(llm.Delta) error { return nil }, started: &started}
		resp, err := s.read(sse.NewLineReader(strings.NewReader(body)))
		if err != nil {
			return
		}
		for _, tc := range resp.ToolCalls {
			if tc.ID == "" || len(tc.Arguments) == 0 {
				t.Fatalf("tool call %+v", tc)
			}
		}
	})
}

// A server that never stops sending tool calls is cut off at
// sse.MaxToolCalls: each is held until the reply ends.
func TestStream_toolCallsBounded(t *testing.T) {
	var body strings.Builder
	for range sse.MaxToolCalls + 1 {
		body.WriteString(`{"model":"qwen3","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"read_file","arguments":{"path":"a"}}}]},"done":false}` + "\n")
	}
	body.WriteString(`{"model":"qwen3","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop"}` + "\n")
	started := false
	s := stream{onDelta: func(llm.Delta) error { return nil }, started: &started}
	if _, err := s.read(sse.NewLineReader(strings.NewReader(body.String()))); err == nil || !strings.Contains(err.Error(), "more than 4096 tool calls") {
		t.Errorf("%d calls: %v", sse.MaxToolCalls+1, err)
	}
}
