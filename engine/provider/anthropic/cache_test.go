package anthropic

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/coda-acp/coda/engine/llm"
)

// A request whose first messages repeat the previous turn's last request
// (CachedPrefix) has a breakpoint where they end, besides the system
// prompt's and the last two messages': however many blocks the turn added
// after them, its first call reads them from the cache. Four at most,
// never on thinking; none with the cache off.
func TestEncode_prefixBreakpoint(t *testing.T) {
	var msgs []llm.Message
	msgs = append(msgs, llm.Message{Role: llm.RoleUser, Text: "Read them all."})
	for i := range 12 { // a turn of 12 calls, each read and answered
		id := fmt.Sprintf("t%d", i)
		msgs = append(msgs,
			llm.Message{Role: llm.RoleAssistant, Text: "Reading.", ToolCalls: []llm.ToolCall{{ID: id, Name: "read_file", Arguments: json.RawMessage(`{}`)}}},
			llm.Message{Role: llm.RoleTool, ToolCallID: id, ToolName: "read_file", Text: "content"})
	}
	prefix := len(msgs)
	msgs = append(msgs,
		llm.Message{Role: llm.RoleUser, Text: "And now?"}, // merged into the last tool result's user message
		llm.Message{Role: llm.RoleAssistant, Text: "Looking.", ToolCalls: []llm.ToolCall{{ID: "n", Name: "grep", Arguments: json.RawMessage(`{}`)}}},
		llm.Message{Role: llm.RoleTool, ToolCallID: "n", ToolName: "grep", Text: "none"})
	for _, tc := range []struct {
		name    string
		noCache bool
		prefix  int
		want    []string // where the breakpoints are: message.block
	}{
		{"with a prefix", false, prefix, []string{"system", "24.0", "25.1", "26.0"}},
		{"without", false, 0, []string{"system", "25.1", "26.0"}},
		{"cache off", true, prefix, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := New("claude-sonnet-4-5", Options{NoCache: tc.noCache})
			var r request
			if _, err := m.encodeWith(&llm.Request{System: "You read.", Messages: msgs, CachedPrefix: tc.prefix}, nil, &r); err != nil {
				t.Fatal(err)
			}
			var got []string
			if sys, ok := r.System.([]block); ok && sys[0].CacheControl != nil {
				got = append(got, "system")
			}
			for i, msg := range r.Messages {
				for j, b := range msg.Content {
					if b.CacheControl != nil {
						got = append(got, fmt.Sprintf("%d.%d", i, j))
					}
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("breakpoints at %v, want %v", got, tc.want)
			}
		})
	}
}
