package ollama

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

// A reply that streams more thinking or text than its Budget fails with
// the limit's name, and the stream is read no further.
func TestModel_Stream_budget(t *testing.T) {
	const budget = 1 << 20
	big := strings.Repeat("A", 64<<10)
	tail := `{"message":{"role":"assistant","content":""},"done":true,"done_reason":"stop"}` + "\n"
	for _, tt := range []struct {
		name, what, field string
	}{
		{"thinking", "thinking", "thinking"},
		{"text", "visible text", "content"},
		{"call names", "replay data (signatures, encrypted reasoning, ids and names)", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			frame := func(int) string {
				if tt.field == "" {
					return fmt.Sprintf(`{"message":{"role":"assistant","tool_calls":[{"function":{"name":"%s","arguments":{}}}]},"done":false}`, big) + "\n"
				}
				return fmt.Sprintf(`{"message":{"role":"assistant","%s":"%s"},"done":false}`, tt.field, big) + "\n"
			}
			srv := hostile.Serve(t, "application/x-ndjson", "", 1024, frame, tail)
			m := New("m", Options{BaseURL: srv.URL, NumCtx: 4096, Budget: sse.Budget{Text: budget, Thinking: budget, Replay: budget}})
			_, err := m.Stream(context.Background(), &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Text: "hi"}}}, func(llm.Delta) error { return nil })
			var over *sse.OverBudget
			if !errors.As(err, &over) || over.What != tt.what || over.Max != budget {
				t.Fatalf("error %v, want the %s's limit of %d bytes", err, tt.what, budget)
			}
			if w := srv.Written(); w > 24<<20 {
				t.Errorf("the server wrote %d bytes before coda stopped reading", w)
			}
		})
	}
}
