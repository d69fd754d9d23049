package llm

import "slices"

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
