package anthropic

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/provider/internal/hostile"
	"github.com/coda-acp/coda/engine/provider/sse"
)

// A reply that keeps more than its Budget fails with the limit's name,
// and the stream is read no further: thousands of thinking blocks each
// with a large signature (counted in bytes, not blocks), a flood of
// thinking, a flood of visible text. Each stream would be 64 MiB; the
// budget is 1 MiB, and the server gets to write a few MiB at most (what
// the connection buffers) before coda stops reading.
func TestModel_Stream_budget(t *testing.T) {
	const budget = 1 << 20
	const events = 1024
	big := strings.Repeat("A", 64<<10)
	ev := func(data string) string {
		return "event: x\ndata: " + data + "\n\n"
	}
	head := ev(`{"type":"message_start","message":{"usage":{"input_tokens":1}}}`)
	tail := ev(`{"type":"message_stop"}`)
	for _, tt := range []struct {
		name, what string
		frame      func(i int) string
	}{
		{"signatures", "replay data", func(i int) string {
			return ev(fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"thinking","thinking":""}}`, i)) +
				ev(fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"signature_delta","signature":"%s"}}`, i, big))
		}},
		{"redacted", "replay data", func(i int) string {
			return ev(fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"redacted_thinking","data":"%s"}}`, i, big))
		}},
		{"ids", "replay data", func(i int) string {
			return ev(fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"tool_use","id":"%s","name":"f","input":{}}}`, i, big))
		}},
		{"thinking", "thinking", func(i int) string {
			return ev(fmt.Sprintf(`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"%s"}}`, big))
		}},
		{"text", "visible text", func(i int) string {
			return ev(fmt.Sprintf(`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"%s"}}`, big))
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := hostile.Serve(t, "text/event-stream", head, events, tt.frame, tail)
			m := New("claude-x", Options{BaseURL: srv.URL, APIKey: "k", Budget: sse.Budget{Text: budget, Thinking: budget, Replay: budget}})
			_, err := m.Stream(context.Background(), simpleRequest, func(llm.Delta) error { return nil })
			var over *sse.OverBudget
			if !errors.As(err, &over) || !strings.Contains(over.What, tt.what) || over.Max != budget {
				t.Fatalf("error %v, want the %s's limit of %d bytes", err, tt.what, budget)
			}
			if !strings.Contains(err.Error(), "1.0 MB, the most coda keeps of one reply") {
				t.Errorf("the error does not say the limit: %v", err)
			}
			if w := srv.Written(); w > 24<<20 {
				t.Errorf("the server wrote %d bytes before coda stopped reading", w)
			}
		})
	}
}
