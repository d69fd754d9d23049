package engine_test

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/llm"
)

// visitStatus is what a test reads of a visit's status.json.
type visitStatus struct {
	Outcome    string    `json:"outcome"`
	Transition string    `json:"transition"`
	Model      string    `json:"model"`
	Usage      llm.Usage `json:"usage"`
	Calls      []struct {
		Model string `json:"model"`
	} `json:"calls"`
}

func readStatus(t *testing.T, turn *testTurn, visit string) visitStatus {
	t.Helper()
	b, err := os.ReadFile(recordPath(turn, "stages/"+visit+"/status.json"))
	if err != nil {
		t.Fatal(err)
	}
	var st visitStatus
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	return st
}

// status.json says how each visit ended (the transition taken, or the
// flag that ended it: never "completed" after max_iterations_hit), with
// the model and the tokens of its calls, which the next stage's preamble
// gives in one line.
func TestRun_visitOutcome(t *testing.T) {
	turn, sp := scripted(t, `
[agent]
name = "three"
[stages.explore]
available_tools = ["list_files"]
max_iterations = 2
[stages.explore.transitions.review]
hint = "Looked enough"
[stages.review]
[stages.review.transitions.report]
hint = "Reviewed"
[stages.report]
mode = "output"
`, `
[[turn]]
text = "Listing."
[[turn.tool_calls]]
name = "list_files"
arguments = {}
[[turn]]
text = "Listing again."
[[turn.tool_calls]]
name = "list_files"
arguments = {}

[[turn]]
text = "It looks fine."
[[turn.tool_calls]]
name = "transition"
arguments = { to = "report" }

[[turn]]
text = "Fine."
`)
	turn.Engine.Tools = builtinTools()
	res := runTurn(context.Background(), turn, &events{})
	ended(t, res, engine.StatusAnswered, "end_turn")

	explore := readStatus(t, turn, "001-explore@1")
	if explore.Outcome != engine.FlagMaxIterationsHit || explore.Transition != "review" {
		t.Errorf("explore ended %q, going to %q; want max_iterations_hit, to review", explore.Outcome, explore.Transition)
	}
	review := readStatus(t, turn, "002-review@1")
	if review.Outcome != "transition" || review.Transition != "report" {
		t.Errorf("review ended %q, going to %q; want transition to report", review.Outcome, review.Transition)
	}
	report := readStatus(t, turn, "003-report@1")
	if report.Outcome != "replied" || report.Transition != "" {
		t.Errorf("report ended %q, going to %q; want replied, the run's end", report.Outcome, report.Transition)
	}
	for name, st := range map[string]visitStatus{"explore": explore, "review": review, "report": report} {
		if st.Model != "script:test" || st.Usage.InputTokens == 0 || st.Usage.OutputTokens == 0 || len(st.Calls) == 0 || st.Calls[0].Model != "script:test" {
			t.Errorf("%s: model %q, usage %+v, calls %+v", name, st.Model, st.Usage, st.Calls)
		}
	}
	if explore.Usage.OutputTokens != len("Listing.")/4+len("Listing again.")/4 {
		t.Errorf("explore's usage %+v is not its two calls' together", explore.Usage)
	}

	preamble := sp.reqs[3].Messages[0].Text
	lines := []*regexp.Regexp{
		regexp.MustCompile(`### Stage explore\nModel script:test, 2 calls, [0-9,]+ tokens in, [0-9,]+ out; ended by max_iterations_hit, going on to review\.\n`),
		regexp.MustCompile(`### Stage review\nModel script:test, 1 call, [0-9,]+ tokens in, [0-9,]+ out; ended by transition to report\.\n`),
	}
	for _, re := range lines {
		if !re.MatchString(preamble) {
			t.Errorf("the report stage's preamble lacks %s:\n%s", re, preamble)
		}
	}
	if strings.Contains(preamble, "completed") {
		t.Errorf("the preamble says completed:\n%s", preamble)
	}
}
