package engine_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine"
)

// A stage that is not the turn's first sees each of the session's earlier
// turns' prompt and final answer, framed as data, before the preamble of
// what earlier stages produced (DESIGN §6); the first stage sees them too.
func TestRun_laterStageSeesHistory(t *testing.T) {
	turn := newTurn(t, `
[agent]
name = "two"
[stages.plan]
[stages.plan.transitions.answer]
hint = "go on"
[stages.answer]
mode = "output"
`, "")
	rec := &transitioner{}
	turn.Models = models{"rec": rec}
	turn.UserModel = "rec"
	turn.History = []engine.Exchange{
		{Prompt: "the first question", Answer: "the first answer"},
		{Prompt: "the second question", Answer: "the second answer"},
	}
	turn.Prompt = "the third question"
	if res := runTurn(context.Background(), turn, &events{}); res.Status != engine.StatusAnswered {
		t.Fatalf("Run = %s (%v), want answered", res.Status, res.Err)
	}
	if len(rec.reqs) != 2 {
		t.Fatalf("%d requests, want one per stage", len(rec.reqs))
	}
	for i, req := range rec.reqs {
		text := req.Messages[0].Text
		for _, want := range []string{
			"<coda-data source=\"turn 1: the user's prompt\">\nthe first question\n</coda-data>",
			"<coda-data source=\"turn 2: the answer\">\nthe second answer\n</coda-data>",
		} {
			if !strings.Contains(text, want) {
				t.Errorf("stage %d's first message lacks %q:\n%s", i+1, want, text)
			}
		}
		if !strings.HasSuffix(text, "the third question") {
			t.Errorf("stage %d's first message does not end with the prompt:\n%s", i+1, text)
		}
	}
	if later := rec.reqs[1].Messages[0].Text; strings.Index(later, "turn 2: the answer") > strings.Index(later, "## What earlier stages produced") {
		t.Errorf("the later stage's history comes after the preamble:\n%s", later)
	}
}

// A later stage whose window cannot hold the session's earlier turns
// compacts them out of its own request, and the session forgets none of
// them: only what the turn's first visit could not carry is forgotten
// (Result.HistoryCut).
func TestRun_laterStageCutDoesNotForget(t *testing.T) {
	turn := newTurn(t, `
[agent]
name = "two"
[stages.plan]
system_prompt = "Plan."
[stages.plan.transitions.answer]
hint = "go on"
[stages.answer]
mode = "output"
system_prompt = """
`+strings.Repeat("Answer with care, word by word, as the plan says. ", 80)+`
"""
`, `
context_window = 4000
[[turn]]
[[turn.tool_calls]]
name = "transition"
arguments = { to = "answer" }
[[turn]]
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "Done." }
`)
	for i := 1; i <= 4; i++ {
		turn.History = append(turn.History, engine.Exchange{Prompt: fmt.Sprintf("question %d: %s", i, strings.Repeat("words ", 330)), Answer: "ok", RunID: fmt.Sprintf("r-%d", i)})
	}
	res := runTurn(context.Background(), turn, &events{})
	if res.Status != engine.StatusAnswered {
		t.Fatalf("turn = %s (%v)", res.Status, res.Err)
	}
	if !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "earlier turn") }) {
		t.Fatalf("the later stage cut no earlier turn: warnings %q", res.Warnings)
	}
	if res.HistoryCut != 0 {
		t.Errorf("the session forgets %d earlier turns a later stage cut, want none", res.HistoryCut)
	}
}
