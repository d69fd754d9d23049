package engine

import (
	"fmt"
	"slices"
	"strings"

	"github.com/coda-acp/coda/engine/llm"
)

// Reasoning effort per call (DESIGN §16). Each model call asks for the
// stage's effort (blueprint.Stage.EffortFor): the user's (Turn.UserEffort:
// --effort, or the session's effort option) where the stage takes the
// user's model, else the stage's own model.effort; "" leaves it to the
// provider's default (the config's effort, or the model's own). A level
// the called model cannot take (a stage's fallback that takes less) is
// sent as the nearest it takes, said once; a model that does not reason is
// sent none.

// effort is the reasoning effort a call of the model spec names asks for
// in this visit.
func (t *modelCalls) effort(spec string) string {
	asked := t.stage.EffortFor(t.userEffort)
	if asked == "" || t.facts == nil {
		return asked
	}
	f := t.facts(spec)
	if f.NoEffort {
		if asked != llm.EffortOff {
			t.notes.warn(fmt.Sprintf("stage %s asks effort %s of %s, which does not reason: it is sent no effort", t.stage.Name, asked, spec))
		}
		return ""
	}
	takes := f.Efforts
	if len(takes) == 0 {
		takes = llm.BasicEfforts
	}
	if !slices.Contains(takes, asked) {
		sent := llm.NearestEffort(asked, takes)
		t.notes.warn(fmt.Sprintf("stage %s asks effort %s of %s, which takes %s: it is sent %s", t.stage.Name, asked, spec, strings.Join(takes, ", "), sent))
		return sent
	}
	return asked
}
