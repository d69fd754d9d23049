package gemini

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
// and the stream is read no further: thousands of thought parts each with
// a large signature (counted in bytes, not parts), a flood of thoughts, a
// flood of visible text. Each stream would be 64 MiB; the budget is 1 MiB.
func TestModel_Stream_budget(t *testing.T) {
	const budget = 1 << 20
	big := strings.Repeat("A", 64<<10)
	chunk := func(part string) string {
		return `data: {"candidates":[{"content":{"role":"model","parts":[` + part + `]}}]}` + "\n\n"
	}
	tail := `data: {"candidates":[{"content":{"role":"model","parts":[]},"finishReason":"STOP"}]}` + "\n\n"
	for _, tt := range []struct {
		name, what string
		frame      func(i int) string
	}{
		{"signatures", "replay data", func(i int) string {
			return chunk(fmt.Sprintf(`{"text":"t%d","thought":true,"thoughtSignature":"%s"}`, i, big))
		}},
		{"call signatures", "replay data", func(i int) string {
			return chunk(fmt.Sprintf(`{"functionCall":{"name":"f","args":{}},"thoughtSignature":"%s"}`, big))
		}},
		{"call names", "replay data", func(i int) string {
			return chunk(fmt.Sprintf(`{"functionCall":{"name":"%s","args":{}}}`, big))
		}},
		{"thoughts", "thinking", func(i int) string {
			return chunk(fmt.Sprintf(`{"text":"%s","thought":true}`, big))
		}},
		{"text", "visible text", func(i int) string {
			return chunk(fmt.Sprintf(`{"text":"%s"}`, big))
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := hostile.Serve(t, "text/event-stream", "", 1024, tt.frame, tail)
			m := New("gemini-x", Options{BaseURL: srv.URL, APIKey: "k", Budget: sse.Budget{Text: budget, Thinking: budget, Replay: budget}})
			_, err := m.Stream(context.Background(), simpleRequest, func(llm.Delta) error { return nil })
			var over *sse.OverBudget
			if !errors.As(err, &over) || !strings.Contains(over.What, tt.what) || over.Max != budget {
				t.Fatalf("error %v, want the %s's limit of %d bytes", err, tt.what, budget)
			}
			if w := srv.Written(); w > 24<<20 {
				t.Errorf("the server wrote %d bytes before coda stopped reading", w)
			}
		})
	}
}
