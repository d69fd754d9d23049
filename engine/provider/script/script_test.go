package script

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/coda-acp/coda/engine/llm"
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
	var deltas []llm.Delta
	collect := func(d llm.Delta) error { deltas = append(deltas, d); return nil }
	req := &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Text: "go"}}}
	resp, err := m.Stream(context.Background(), req, collect)
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.Delta{{Thinking: "hmm"}, {Text: "a"}, {Text: "b"}}
	if diff := cmp.Diff(want, deltas); diff != "" {
		t.Errorf("deltas (-want +got):\n%s", diff)
	}
	if resp.Text != "ab" || resp.StopReason != llm.StopToolUse || len(resp.ToolCalls) != 1 ||
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
	req := &llm.Request{Messages: []llm.Message{{Role: llm.RoleTool, Text: "it was refused"}}}
	noop := func(llm.Delta) error { return nil }
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
	_, err := New("script:slow", s).Stream(ctx, &llm.Request{}, func(llm.Delta) error { return nil })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Stream = %v, want context.Canceled", err)
	}
}

func TestParse_unknownKey(t *testing.T) {
	if _, err := Parse([]byte("[[turn]]\ntxet = \"typo\"\n"), "typo"); err == nil || !strings.Contains(err.Error(), "turn.txet") {
		t.Errorf("Parse = %v, want the unknown key named", err)
	}
}

// Turns with for serve only the caller they name, by name or task id, each
// caller its own in order; turns without for serve the main run, which
// never gets a worker's.
func TestModel_Stream_for(t *testing.T) {
	s, err := Parse([]byte(`
[[turn]]
text = "main 1"
[[turn]]
for = "w1"
text = "w1 first"
[[turn]]
for = "src/a.go"
text = "a.go first"
[[turn]]
for = "w1"
text = "w1 second"
[[turn]]
text = "main 2"
[[turn]]
for = "c1/w2"
text = "nested"
`), "for")
	if err != nil {
		t.Fatal(err)
	}
	m := New("script:for", s)
	say := func(c llm.Caller) string {
		resp, err := m.Stream(context.Background(), &llm.Request{Caller: c}, func(llm.Delta) error { return nil })
		if err != nil {
			return err.Error()
		}
		return resp.Text
	}
	w1 := llm.Caller{Name: "w1"}
	a := llm.Caller{Name: "w2", Task: "src/a.go"}
	got := []string{say(w1), say(llm.Caller{}), say(a), say(w1), say(llm.Caller{}), say(llm.Caller{Name: "c1/w2"}), say(w1), say(llm.Caller{})}
	want := []string{"w1 first", "main 1", "a.go first", "w1 second", "main 2", "nested",
		"the script model has no turn left for w1 (2 of its turns played; it asked for another)",
		"the script model has no turn left (2 turns played; the run asked for another)"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// expect_effort fails a call that asks for another effort; "none" expects
// none.
func TestModel_Stream_expectEffort(t *testing.T) {
	s, err := Parse([]byte("[[turn]]\nexpect_effort = \"high\"\ntext = \"a\"\n[[turn]]\nexpect_effort = \"none\"\ntext = \"b\"\n[[turn]]\nexpect_effort = \"none\"\ntext = \"c\"\n"), "effort")
	if err != nil {
		t.Fatal(err)
	}
	m := New("script:effort", s)
	noop := func(llm.Delta) error { return nil }
	if _, err := m.Stream(context.Background(), &llm.Request{Effort: "high"}, noop); err != nil {
		t.Errorf("effort high, expected high: %v", err)
	}
	if _, err := m.Stream(context.Background(), &llm.Request{}, noop); err != nil {
		t.Errorf("no effort, expected none: %v", err)
	}
	if _, err := m.Stream(context.Background(), &llm.Request{Effort: "low"}, noop); err == nil || !strings.Contains(err.Error(), `expected effort "none"; the call asked for "low"`) {
		t.Errorf("effort low, expected none: %v", err)
	}
}
