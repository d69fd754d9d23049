package openai

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
// and the stream is read no further. Each stream would be 64 MiB; the
// budget is 1 MiB.
func TestStream_budget(t *testing.T) {
	const budget = 1 << 20
	big := strings.Repeat("A", 64<<10)
	data := func(s string) string { return "data: " + s + "\n\n" }
	req := &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Text: "hi"}}}
	opts := func(url string) Options {
		return Options{BaseURL: url, APIKey: "k", Budget: sse.Budget{Text: budget, Thinking: budget, Replay: budget}}
	}
	for _, tt := range []struct {
		name, what string
		responses  bool
		frame      func(i int) string
		tail       string
	}{
		{"reasoning items", "replay data", true, func(i int) string {
			return data(fmt.Sprintf(`{"type":"response.output_item.done","item":{"type":"reasoning","id":"rs_%d","encrypted_content":"%s","summary":[]}}`, i, big))
		}, data(`{"type":"response.completed","response":{"status":"completed"}}`)},
		{"item ids", "replay data", true, func(i int) string {
			return data(fmt.Sprintf(`{"type":"response.output_item.added","item":{"type":"function_call","id":"fc_%d_%s","call_id":"c","name":"f"}}`, i, big))
		}, data(`{"type":"response.completed","response":{"status":"completed"}}`)},
		{"reasoning summary", "thinking", true, func(i int) string {
			return data(fmt.Sprintf(`{"type":"response.reasoning_summary_text.delta","item_id":"rs","delta":"%s"}`, big))
		}, data(`{"type":"response.completed","response":{"status":"completed"}}`)},
		{"responses text", "visible text", true, func(i int) string {
			return "event: response.output_text.delta\n" + data(fmt.Sprintf(`{"type":"response.output_text.delta","delta":"%s"}`, big))
		}, data(`{"type":"response.completed","response":{"status":"completed"}}`)},
		{"responses refusal", "refusal", true, func(i int) string {
			return data(fmt.Sprintf(`{"type":"response.refusal.delta","delta":"%s"}`, big))
		}, data(`{"type":"response.completed","response":{"status":"completed"}}`)},
		{"extra content", "replay data", false, func(i int) string {
			return data(fmt.Sprintf(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":%d,"id":"c%d","function":{"name":"f","arguments":"{}"},"extra_content":{"google":{"thought_signature":"%s"}}}]}}]}`, i, i, big))
		}, data(`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`) + data("[DONE]")},
		{"call ids", "replay data", false, func(i int) string {
			return data(fmt.Sprintf(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":%d,"id":"%s","function":{"name":"f","arguments":"{}"}}]}}]}`, i, big))
		}, data(`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`) + data("[DONE]")},
		{"chat reasoning", "thinking", false, func(i int) string {
			return data(fmt.Sprintf(`{"choices":[{"index":0,"delta":{"reasoning_content":"%s"}}]}`, big))
		}, data(`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`) + data("[DONE]")},
		{"chat text", "visible text", false, func(i int) string {
			return data(fmt.Sprintf(`{"choices":[{"index":0,"delta":{"content":"%s"}}]}`, big))
		}, data(`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`) + data("[DONE]")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := hostile.Serve(t, "text/event-stream", "", 1024, tt.frame, tt.tail)
			var m llm.Model = New("gpt-x", opts(srv.URL))
			if tt.responses {
				m = NewResponses("gpt-x", opts(srv.URL))
			}
			_, err := m.Stream(context.Background(), req, func(llm.Delta) error { return nil })
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
