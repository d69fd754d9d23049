package engine

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine/llm"
)

// notesKept is a runNotes that keeps what it is told.
type notesKept struct{ warnings, flags []string }

func (n *notesKept) warn(w string) { n.warnings = append(n.warnings, w) }
func (n *notesKept) flag(f string) { n.flags = append(n.flags, f) }

const how = "Call submit_output with a corrected answer"

// Past max_repairs the visit stops repairing: one last nudge carries the
// reasons, and the next refusal halts the visit for its fallback without
// the answer.
func TestRepair_budget(t *testing.T) {
	var notes notesKept
	p := newRepair("answer", 3, 2, &notes)
	for i, key := range []string{"a", "b"} {
		if p.refusal(key, "not JSON: "+key) {
			t.Fatalf("refusal %d stopped the repairs, within max_repairs = 2", i+1)
		}
		if msg := p.afterTools(i, true, how, "review"); msg != "" {
			t.Fatalf("refusal %d was nudged (%q): its result carries the reasons", i+1, msg)
		}
	}
	if !p.lastRepair() {
		t.Error("the submission after max_repairs refusals is not the last repair")
	}
	if !p.refusal("c", "not JSON: c") {
		t.Fatal("the third refusal did not stop the repairs")
	}
	if !slices.Equal(notes.flags, []string{FlagRepairsExhausted}) || len(notes.warnings) != 1 || !strings.Contains(notes.warnings[0], "past max_repairs = 2") {
		t.Fatalf("notes = %+v", notes)
	}
	msg := p.afterTools(2, true, how, "review")
	if want := "Your answer was refused again, because:\nnot JSON: c\nThis is your last attempt in this stage. " + how + "."; msg != want {
		t.Fatalf("last attempt = %q, want %q", msg, want)
	}
	if !p.send() || p.send() {
		t.Error("the call after the nudge does not carry it once")
	}
	p.refusal("d", "not JSON: d")
	if msg := p.afterTools(3, true, how, "review"); msg != "" {
		t.Fatalf("a second last attempt: %q", msg)
	}
	if !p.halted() || p.haltTo != "review" || !p.forced || !p.exhausted {
		t.Fatalf("after the last attempt: halted %v to %q, forced %v, exhausted %v", p.halted(), p.haltTo, p.forced, p.exhausted)
	}
	if !slices.Equal(notes.flags, []string{FlagRepairsExhausted, FlagOutputForced}) {
		t.Errorf("flags = %v", notes.flags)
	}
	if p.nudgesSent() != 1 || p.refused != 4 {
		t.Errorf("nudges sent %d, refused %d; want 1, 4", p.nudgesSent(), p.refused)
	}
	var e ending
	e.keep(&p, "answer")
	if e.forced != "answer" || !e.exhausted || e.refusal != "not JSON: d" {
		t.Errorf("the run's ending = %+v", e)
	}
}

// The same refused answer twice in a row stops the repairs at once, and
// the repeat's reasons do not replace the first's; an accepted submission
// between them starts a new row.
func TestRepair_repeat(t *testing.T) {
	var notes notesKept
	p := newRepair("answer", 3, 4, &notes)
	p.refusal("same", "missing field id")
	p.accepted()
	if p.refusal("same", "missing field id") {
		t.Fatal("a refusal after an accepted submission counted as a repeat")
	}
	if !p.refusal("same", "identical to a refused submission") {
		t.Fatal("the repeat did not stop the repairs")
	}
	if p.reasons != "missing field id" || !strings.Contains(notes.warnings[0], "same refused answer twice") {
		t.Errorf("reasons %q, warnings %v", p.reasons, notes.warnings)
	}
}

// Nudges cost revisits: past max_revisits the visit ends without the
// answer (output_forced), and a transition held for the answer costs one
// too, but not when a later call of the response submits it.
func TestRepair_nudges(t *testing.T) {
	var notes notesKept
	p := newRepair("answer", 2, 4, &notes)
	submit := []llm.ToolCall{{Name: "submit_output", Arguments: json.RawMessage(`{}`)}}
	if _, held := p.hold("review", true, submit); held {
		t.Error("a transition followed by submit_output was held")
	}
	if _, held := p.hold("review", false, nil); held {
		t.Error("a transition was held in a visit that owes nothing")
	}
	res, held := p.hold("review", true, nil)
	if !held || !res.IsError || !strings.Contains(res.Output, "then transition to review") {
		t.Fatalf("held %v: %+v", held, res)
	}
	if msg := p.leave("review"); !strings.Contains(msg, "You chose to move on to review") {
		t.Fatalf("leave = %q", msg)
	}
	if _, held := p.hold("review", true, nil); held {
		t.Error("a transition was held with no revisit left")
	}
	if msg := p.nudge("Reply with the answer."); msg != "" {
		t.Fatalf("a nudge past max_revisits: %q", msg)
	}
	if !p.forced || !slices.Equal(notes.flags, []string{FlagOutputForced}) || !strings.Contains(notes.warnings[0], "nudged 0 time(s)") {
		t.Errorf("forced %v, notes %+v", p.forced, notes)
	}
}
