package gemini

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/provider/sse"
)

// FuzzStream feeds arbitrary bodies to the stream reader: it may fail, but
// not panic; a reply it accepts has tool calls with arguments, and its
// replay describes it exactly, so that the reply goes back whole.
func FuzzStream(f *testing.F) {
	for _, name := range []string{"text.sse", "function_call.sse", "max_tokens.sse", "safety.sse", "prompt_blocked.sse", "overloaded.sse", "not_streamed.json"} {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		if strings.HasSuffix(name, ".json") {
			b = append([]byte("data: "), b...)
		}
		f.Add(string(b))
	}
	f.Fuzz(func(t *testing.T, body string) {
		started := false
		n := 0
		s := &stream{onDelta: func(llm.Delta) error { return nil }, started: &started, newID: func() string { n++; return localIDPrefix + string(rune('a'+n%26)) }}
		if err := s.read(sse.NewReader(strings.NewReader(body))); err != nil {
			return
		}
		resp, err := s.response("gemini-3-pro-preview")
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range resp.ToolCalls {
			if len(tc.Arguments) == 0 {
				t.Fatalf("tool call %+v", tc)
			}
		}
		msg := llm.Message{Role: llm.RoleAssistant, Text: resp.Text, Thinking: resp.Thinking, ToolCalls: resp.ToolCalls, Replay: resp.Replay}
		if len(resp.Replay) > 0 {
			var r replay
			if err := json.Unmarshal(resp.Replay, &r); err != nil {
				t.Fatal(err)
			}
			if ok, thoughts := r.fits(&msg); !ok || !thoughts {
				t.Fatalf("the replay %s does not describe the reply %+v", resp.Replay, resp)
			}
		}
		m := New("gemini-3-pro-preview", Options{Thinking: ThinkingLevel})
		m.modelParts(&msg)
	})
}

// A server that keeps sending parts that cannot merge (thought and text by
// turns, or each signed) is cut off at maxParts: the replay holds each
// until the reply ends.
func TestStream_partsBounded(t *testing.T) {
	var body strings.Builder
	for i := range maxParts/2 + 1 {
		fmt.Fprintf(&body, `data: {"candidates": [{"content": {"parts": [{"text": "thought %d", "thought": true}, {"text": "text %d"}],"role": "model"},"index": 0}]}`+"\n\n", i, i)
	}
	body.WriteString(`data: {"candidates": [{"content": {"parts": [{"text": "."}],"role": "model"},"finishReason": "STOP","index": 0}]}` + "\n\n")
	started := false
	s := &stream{onDelta: func(llm.Delta) error { return nil }, started: &started, newID: func() string { return localIDPrefix + "x" }}
	if err := s.read(sse.NewReader(strings.NewReader(body.String()))); err == nil || !strings.Contains(err.Error(), "more than 16384 parts") {
		t.Errorf("%d parts: %v", maxParts+2, err)
	}
}
