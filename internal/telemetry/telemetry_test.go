package telemetry_test

import (
	"context"
	"errors"
	"testing"

	"github.com/coda-acp/coda/internal/telemetry"
)

// Telemetry off costs a turn no allocation: its spans are nothing, and
// the context comes back as it went in.
func TestOff_allocates(t *testing.T) {
	ctx := context.Background()
	err := errors.New("x")
	allocs := testing.AllocsPerRun(100, func() {
		c, turn := telemetry.Off.Turn(ctx, telemetry.Turn{Agent: "a", RunID: "r"})
		c, stage := telemetry.Off.Stage(c, "s", 1)
		c, chat := telemetry.Off.Chat(c, "openai:gpt")
		_, tool := telemetry.Off.Tool(c, "read_file", "call_1")
		if chat.KeepsContent() {
			t.Fatal("Off keeps content")
		}
		chat.Usage(telemetry.Usage{Input: 1})
		chat.Finish("end_turn")
		for _, s := range []telemetry.Span{tool, chat, stage, turn} {
			s.End(err)
		}
		telemetry.Off.Flush()
		if c != ctx {
			t.Fatal("Off changed the context")
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations a turn", allocs)
	}
}

// The client's trace context rides the context to the tracer; outside a
// span there is no traceparent to send.
func TestWithParent(t *testing.T) {
	ctx := context.Background()
	if telemetry.WithParent(ctx, "", "x") != ctx {
		t.Error("an empty traceparent changed the context")
	}
	tp, ts := telemetry.Parent(telemetry.WithParent(ctx, "00-a-b-01", "k=v"))
	if tp != "00-a-b-01" || ts != "k=v" {
		t.Errorf("Parent = %q, %q", tp, ts)
	}
	if tp, _ := telemetry.Traceparent(telemetry.WithParent(ctx, "00-a-b-01", "")); tp != "" {
		t.Errorf("Traceparent outside a span = %q", tp)
	}
}
