package engine_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine"
)

// A stage's transition_prompt is its own words for choosing a way out:
// the model is asked in them, with coda's ways out appended, DONE among
// them where allow_complete offers it though the words never mention it;
// the transition tool says them too.
func TestRun_transitionPrompt(t *testing.T) {
	const bp = `
[agent]
name = "tp"
[stages.look]
allow_complete = true
transition_prompt = "Decide whether the change needs a written answer."
[stages.look.transitions.answer]
hint = "Someone asked a question"
[stages.answer]
mode = "output"
`
	turn, sh := shaped(t, bp, `
[[turn]]
text = "I have looked."
[[turn]]
expect = """
Decide whether the change needs a written answer.

Call transition with one of these ways out:
- answer: Someone asked a question
- DONE: the whole task is finished; end the run here"""
[[turn.tool_calls]]
name = "transition"
arguments = { to = "answer" }
[[turn]]
text = "No questions."
`, openaiLike)
	res := runTurn(context.Background(), turn, &events{})
	ended(t, res, engine.StatusAnswered, "end_turn")
	var desc string
	for _, tool := range sh.requests()[0].Tools {
		if tool.Name == "transition" {
			desc = tool.Description
		}
	}
	if !strings.HasPrefix(desc, "Move on from this stage. Decide whether the change needs a written answer.") || !strings.Contains(desc, "- DONE:") {
		t.Errorf("transition's description %q", desc)
	}
}

// DONE before the stage that owes the answer ends the run without one, as
// allow_complete lets it (lint warns of it): the run says so in its flags
// and a warning, rather than looking like a success.
func TestRun_doneBeforeAnswer(t *testing.T) {
	const bp = `
[agent]
name = "done"
[stages.look]
allow_complete = true
[stages.look.transitions.answer]
hint = "Someone asked a question"
[stages.answer]
mode = "output"
`
	turn := newTurn(t, bp, `
[[turn]]
[[turn.tool_calls]]
name = "transition"
arguments = { to = "DONE" }
`)
	res := runTurn(context.Background(), turn, &events{})
	ended(t, res, engine.StatusCompleteNoOutput, "end_turn")
	if !slices.Contains(res.Flags, engine.FlagDoneBeforeAnswer) {
		t.Errorf("flags %q lack %s", res.Flags, engine.FlagDoneBeforeAnswer)
	}
	if !slices.ContainsFunc(res.Warnings, func(w string) bool {
		return strings.Contains(w, "stage look ended the run with DONE (allow_complete) before any answer was handed in")
	}) {
		t.Errorf("warnings %q", res.Warnings)
	}
}
