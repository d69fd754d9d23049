package provider

import (
	"testing"

	"github.com/coda-acp/coda/engine/llm"
)

// A replay fits a message when its pieces add up to the message's text
// and calls (and, for thoughts, its thinking); the cursor hands them out
// in the pieces' order.
func TestReplayFits(t *testing.T) {
	msg := &llm.Message{Text: "hello world", Thinking: "hmm", ToolCalls: []llm.ToolCall{{Name: "a"}, {Name: "b"}}}
	type piece struct {
		kind string
		n    int
	}
	fits := func(ps []piece, other ...string) (bool, bool) {
		return ReplayFits(msg, len(ps), func(i int) (string, int) { return ps[i].kind, ps[i].n }, other...)
	}
	all := []piece{{ReplayThinking, 3}, {ReplayText, 6}, {ReplayCall, 0}, {ReplayText, 5}, {ReplayCall, 0}}
	if ok, thoughts := fits(all); !ok || !thoughts {
		t.Errorf("the whole message: %v %v", ok, thoughts)
	}
	if ok, thoughts := fits(all[1:]); !ok || thoughts {
		t.Errorf("without its thinking: %v %v", ok, thoughts)
	}
	if ok, _ := fits(append(all, piece{"r", 0})); ok {
		t.Error("an unknown kind fits")
	}
	if ok, _ := fits(append(all, piece{"r", 0}), "r"); !ok {
		t.Error("a vendor's own kind does not fit")
	}
	if ok, _ := fits([]piece{{ReplayText, -1}, {ReplayText, 12}, {ReplayCall, 0}, {ReplayCall, 0}}); ok {
		t.Error("a negative length fits")
	}
	at := NewReplayCursor(msg)
	if got := at.Thinking(3) + "|" + at.Text(6) + "|" + at.Call().Name + "|" + at.Text(5) + "|" + at.Call().Name; got != "hmm|hello |a|world|b" {
		t.Errorf("cursor: %q", got)
	}
}
