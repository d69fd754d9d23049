package script

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/coda-acp/coda/engine"
)

const sample = `
context_window = 1000

[[turn]]
thinking = "hmm"
text = ["a", "b"]
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "x", artifacts = [{ name = "r", path = "r.md" }] }

[[turn]]
expect = "refused"
text = "again"
[[turn.tool_calls]]
name = "submit_output"
raw_arguments = '{"content": "cut'
`

func TestModel_Stream(t *testing.T) {
	s, err := Parse([]byte(sample), "sample")
	if err != nil {
		t.Fatal(err)
	}
	m := New("script:sample", s)
	var deltas []engine.Delta
	collect := func(d engine.Delta) error { deltas = append(deltas, d); return nil }
	req := &engine.Request{Messages: []engine.Message{{Role: engine.RoleUser, Text: "go"}}}
	resp, err := m.Stream(context.Background(), req, collect)
	if err != nil {
		t.Fatal(err)
	}
	want := []engine.Delta{{Thinking: "hmm"}, {Text: "a"}, {Text: "b"}}
	if diff := cmp.Diff(want, deltas); diff != "" {
		t.Errorf("deltas (-want +got):\n%s", diff)
	}
	if resp.Text != "ab" || resp.StopReason != engine.StopToolUse || len(resp.ToolCalls) != 1 ||
		string(resp.ToolCalls[0].Arguments) != `{"artifacts":[{"name":"r","path":"r.md"}],"content":"x"}` ||
		resp.Usage.ContextWindow != 1000 {
		t.Errorf("response = %+v", resp)
	}

	// The second turn expects the last message to say "refused".
	if _, err := m.Stream(context.Background(), req, collect); err == nil || !strings.Contains(err.Error(), `expected the last message to contain "refused"`) {
		t.Errorf("expect not enforced: %v", err)
	}
}

func TestModel_Stream_rawArgumentsAndExhaustion(t *testing.T) {
	s, _ := Parse([]byte(sample), "sample")
	m := New("script:sample", s)
	req := &engine.Request{Messages: []engine.Message{{Role: engine.RoleTool, Text: "it was refused"}}}
	noop := func(engine.Delta) error { return nil }
	m.Stream(context.Background(), req, noop)
	resp, err := m.Stream(context.Background(), req, noop)
	if err != nil || string(resp.ToolCalls[0].Arguments) != `{"content": "cut` {
		t.Fatalf("raw arguments: %+v, %v", resp, err)
	}
	if _, err := m.Stream(context.Background(), req, noop); !errors.Is(err, ErrExhausted) {
		t.Errorf("a third call = %v, want ErrExhausted", err)
	}
}

func TestModel_Stream_cancelDuringDelay(t *testing.T) {
	s, _ := Parse([]byte("[[turn]]\ndelay_ms = 60000\ntext = [\"slow\"]\n"), "slow")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(10*time.Millisecond, cancel)
	_, err := New("script:slow", s).Stream(ctx, &engine.Request{}, func(engine.Delta) error { return nil })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Stream = %v, want context.Canceled", err)
	}
}

func TestParse_unknownKey(t *testing.T) {
	if _, err := Parse([]byte("[[turn]]\ntxet = \"typo\"\n"), "typo"); err == nil || !strings.Contains(err.Error(), "turn.txet") {
		t.Errorf("Parse = %v, want the unknown key named", err)
	}
}
