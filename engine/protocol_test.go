package engine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/llm"
)

// The answer's protocol (DESIGN §19) is in every answering stage's system
// prompt, whether the model hands its answer in through submit_output or
// by a reply taken as the answer (a model without tools).
func TestRun_answerProtocol(t *testing.T) {
	const protocol = "You may select, clean up, deduplicate, reorder, split and restructure what was found; never invent, guess or complete a value."
	for _, toolless := range []bool{false, true} {
		turn, sp := scripted(t, jsonStage, `
[[turn]]
text = "{\"ok\": true}"
`)
		if toolless {
			turn.ModelFacts = func(string) llm.ModelFact { return llm.ModelFact{NoTools: "tools = false"} }
		}
		res := runTurn(context.Background(), turn, &events{})
		ended(t, res, engine.StatusAnswered, "end_turn")
		sys := sp.reqs[0].System
		if !strings.Contains(sys, protocol) || !strings.Contains(sys, "Where a value was not found, leave it out") {
			t.Errorf("toolless %v: the system prompt lacks the answer's protocol:\n%s", toolless, sys)
		}
		if unavailable := strings.Contains(sys, "`unavailable`"); unavailable == toolless {
			t.Errorf("toolless %v: the system prompt offers unavailable: %v", toolless, unavailable)
		}
	}
}
