package engine

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine/llm"
)

// BenchmarkFit measures what sizing a request costs before each call
// (requestBytes, the whole of fit's work when the request fits) against
// the reference every provider pays for the same call: encoding its
// messages as JSON. A long tool loop: 200 messages, half of them 5 KB
// tool results (about 1 MB).
func BenchmarkFit(b *testing.B) {
	req := &llm.Request{System: strings.Repeat("system prompt ", 300)}
	for i := range 200 {
		if i%2 == 0 {
			req.Messages = append(req.Messages, llm.Message{Role: llm.RoleAssistant, Text: "Reading the next file.", ToolCalls: []llm.ToolCall{{ID: "c", Name: "read_file", Arguments: json.RawMessage(`{"path":"f.txt"}`)}}})
		} else {
			req.Messages = append(req.Messages, llm.Message{Role: llm.RoleTool, ToolCallID: "c", ToolName: "read_file", Text: strings.Repeat("a line of the file\n", 270)})
		}
	}
	b.Run("requestBytes", func(b *testing.B) {
		for b.Loop() {
			if requestBytes(req) == 0 {
				b.Fatal("no bytes")
			}
		}
	})
	b.Run("reference_json", func(b *testing.B) {
		for b.Loop() {
			if _, err := json.Marshal(req.Messages); err != nil {
				b.Fatal(err)
			}
		}
	})
}
