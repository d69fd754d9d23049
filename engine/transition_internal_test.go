package engine

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine/blueprint"
	"github.com/coda-acp/coda/engine/llm"
)

// A transition goes to a way out, in the blueprint's order; one that is
// not a way out, or leaves while the answer is owed, does not move.
func TestWaysOut_take(t *testing.T) {
	s := &blueprint.Stage{Name: "draft", TransitionOrder: []string{"review", "publish"}, AllowComplete: true}
	w := waysOut{stage: s, targets: []string{"review", "publish", blueprint.Done}}
	if !w.offered() || !w.is(blueprint.ToolTransition) || w.is("read_file") || w.fallback() != "review" {
		t.Fatalf("offered %v, fallback %q", w.offered(), w.fallback())
	}
	call := func(to string) []llm.ToolCall {
		args, _ := json.Marshal(map[string]string{"to": to, "reason": "done"})
		return []llm.ToolCall{{Name: blueprint.ToolTransition, Arguments: args}}
	}
	rep := newRepair("draft", 3, 4, &notesKept{})
	if res, to := w.take(call("publish"), 0, &rep, false); to != "publish" || res.IsError {
		t.Errorf("publish: %q, %+v", to, res)
	}
	if res, to := w.take(call("nowhere"), 0, &rep, false); to != "" || !strings.Contains(res.Output, "not a way out") {
		t.Errorf("nowhere: %q, %+v", to, res)
	}
	if res, to := w.take(call("review"), 0, &rep, true); to != "" || !strings.HasPrefix(res.Output, "Not yet: this stage owes the answer.") {
		t.Errorf("leaving while the answer is owed: %q, %+v", to, res)
	}
	if _, to := w.take(call(blueprint.Done), 0, &rep, false); to != blueprint.Done {
		t.Errorf("DONE: %q", to)
	}
	if (waysOut{targets: []string{blueprint.Done}}).fallback() != "" {
		t.Error("a fallback of DONE does not end the run")
	}
}

// A stage's effort is sent as the nearest level the model takes, said
// once; a model that does not reason is sent none.
func TestModelCalls_effort(t *testing.T) {
	var notes notesKept
	mc := modelCalls{stage: &blueprint.Stage{Name: "plan"}, userEffort: "xhigh", notes: &notes, support: NewToolSupport(),
		facts: func(spec string) llm.ModelFact {
			if spec == "local:small" {
				return llm.ModelFact{NoEffort: true}
			}
			return llm.ModelFact{Efforts: []string{"low", "medium", "high"}}
		}}
	if got := mc.effort("openai:m"); got != "high" {
		t.Errorf("effort = %q, want the nearest, high", got)
	}
	if got := mc.effort("local:small"); got != "" {
		t.Errorf("effort of a model that does not reason = %q", got)
	}
	if len(notes.warnings) != 2 {
		t.Errorf("warnings = %q", notes.warnings)
	}
}
