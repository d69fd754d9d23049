package engine

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// ParseBlueprint refuses a blueprint with every problem named in one line,
// and keeps the order the file gives its stages and transitions.
func TestParseBlueprint(t *testing.T) {
	_, err := ParseBlueprint([]byte(`
[stages.a]
max_iteratons = 3
[stages.a.transitions.nowhere]
`), "bp.toml")
	if err == nil {
		t.Fatal("ParseBlueprint accepted a bad blueprint")
	}
	msg := err.Error()
	for _, want := range []string{"bp.toml: ", "stages.a.max_iteratons: unknown key (did you mean stages.a.max_iterations?)", `stages.a.transitions.nowhere: no stage is named "nowhere"`} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("error %q is more than one line", msg)
	}

	b, err := ParseBlueprint([]byte(`
[stages.z]
[stages.z.transitions.m]
[stages.z.transitions.a]
[stages.m]
mode = "output"
[stages.a]
mode = "output"
`), "ok.toml")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"z", "m", "a"}, b.Order); diff != "" {
		t.Errorf("stage order (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"m", "a"}, b.Stages["z"].TransitionOrder); diff != "" {
		t.Errorf("transition order (-want +got):\n%s", diff)
	}
	if b.StartStage().Name != "z" {
		t.Errorf("start = %s, want the first stage", b.StartStage().Name)
	}
}
