package engine

import (
	"fmt"
	"slices"
	"strings"
)

// Reasoning effort per call (DESIGN §16). Each model call asks for the
// stage's effort (blueprint.Stage.EffortFor): the user's (Turn.UserEffort:
// --effort, or the session's effort option) where the stage takes the
// user's model, else the stage's own model.effort; "" leaves it to the
// provider's default (the config's effort, or the model's own). A level
// the called model cannot take (a stage's fallback that takes less) is
// sent as the nearest it takes, said once; a model that does not reason is
// sent none.

// BasicEfforts are the levels a model takes when nothing more is known of
// it: the catalog does not know it, or it is a script.
var BasicEfforts = []string{EffortOff, EffortLow, EffortMedium, EffortHigh}

// effortOrder is every level, rising.
var effortOrder = []string{EffortOff, EffortMinimal, EffortLow, EffortMedium, EffortHigh, EffortXHigh, EffortMax}

// NearestEffort is the level of takes nearest effort from below (a model
// that takes less than was asked: high for xhigh), else takes' lowest;
// effort itself when takes has it or is empty, and "" for "".
func NearestEffort(effort string, takes []string) string {
	if effort == "" || len(takes) == 0 || slices.Contains(takes, effort) {
		return effort
	}
	rank := slices.Index(effortOrder, effort)
	best, bestRank := "", -1
	for _, t := range takes {
		if r := slices.Index(effortOrder, t); r < rank && r > bestRank {
			best, bestRank = t, r
		}
	}
	if best == "" {
		best = takes[0]
	}
	return best
}

// effort is the reasoning effort a call of the model spec names asks for
// in this visit.
func (v *stageVisit) effort(spec string) string {
	r := v.run
	asked := v.stage.EffortFor(r.t.UserEffort)
	if asked == "" || r.e.ModelFacts == nil {
		return asked
	}
	f := r.e.ModelFacts(spec)
	if f.NoEffort {
		if asked != EffortOff {
			r.warn(fmt.Sprintf("stage %s asks effort %s of %s, which does not reason: it is sent no effort", v.stage.Name, asked, spec))
		}
		return ""
	}
	takes := f.Efforts
	if len(takes) == 0 {
		takes = BasicEfforts
	}
	if !slices.Contains(takes, asked) {
		sent := NearestEffort(asked, takes)
		r.warn(fmt.Sprintf("stage %s asks effort %s of %s, which takes %s: it is sent %s", v.stage.Name, asked, spec, strings.Join(takes, ", "), sent))
		return sent
	}
	return asked
}
