package anthropic

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/provider/sse"
)

// FuzzStream feeds arbitrary bodies to the stream reader: it may fail, but
// not panic, and a reply it accepts has tool calls with arguments.
func FuzzStream(f *testing.F) {
	for _, name := range []string{"text_tool_thinking.sse", "text.sse", "overloaded.sse"} {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Fuzz(func(t *testing.T, body string) {
		started := false
		s := &stream{onDelta: func(llm.Delta) error { return nil }, started: &started}
		if err := s.read(sse.NewReader(strings.NewReader(body))); err != nil {
			return
		}
		resp, err := s.response()
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range resp.ToolCalls {
			if len(tc.Arguments) == 0 {
				t.Fatalf("tool call %+v", tc)
			}
		}
		// The replay describes the reply exactly, so that it goes back
		// whole.
		if raw := s.replay("claude-opus-4-7"); raw != nil {
			var r replay
			if err := json.Unmarshal(raw, &r); err != nil {
				t.Fatal(err)
			}
			msg := llm.Message{Role: llm.RoleAssistant, Text: resp.Text, Thinking: resp.Thinking, ToolCalls: resp.ToolCalls, Replay: raw}
			if !r.fits(&msg) {
				t.Fatalf("the replay %s does not describe the reply %+v", raw, resp)
			}
			New("claude-opus-4-7", Options{}).assistantBlocks(&msg)
		}
	})
}
