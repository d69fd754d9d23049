package llm_test

import (
	"slices"
	"testing"

	"github.com/coda-acp/coda/engine/blueprint"
	"github.com/coda-acp/coda/engine/llm"
)

// The blueprint's effort levels are the engine's.
func TestEffortLevels(t *testing.T) {
	want := []string{llm.EffortOff, llm.EffortMinimal, llm.EffortLow, llm.EffortMedium, llm.EffortHigh, llm.EffortXHigh, llm.EffortMax}
	if !slices.Equal(blueprint.EffortLevels, want) {
		t.Errorf("blueprint.EffortLevels = %v, want %v", blueprint.EffortLevels, want)
	}
}

func TestNearestEffort(t *testing.T) {
	for _, tt := range []struct {
		effort string
		takes  []string
		want   string
	}{
		{"", []string{"low"}, ""},
		{"high", nil, "high"},
		{"high", []string{"low", "medium", "high"}, "high"},
		{"xhigh", []string{"low", "medium", "high"}, "high"},
		{"max", []string{"off", "low", "high", "xhigh"}, "xhigh"},
		{"off", []string{"low", "medium", "high"}, "low"},
		{"minimal", []string{"off", "low"}, "off"},
	} {
		if got := llm.NearestEffort(tt.effort, tt.takes); got != tt.want {
			t.Errorf("NearestEffort(%q, %v) = %q, want %q", tt.effort, tt.takes, got, tt.want)
		}
	}
}
