package blueprint

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coda-acp/coda/outputspec"
)

// Parse refuses a blueprint with every problem named in one line,
// and keeps the order the file gives its stages and transitions.
func TestParse(t *testing.T) {
	_, err := Parse([]byte(`
[stages.a]
max_iteratons = 3
[stages.a.transitions.nowhere]
`), "bp.toml")
	if err == nil {
		t.Fatal("Parse accepted a bad blueprint")
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

	b, err := Parse([]byte(`
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

// The start stage is agent.start when set, else the first in the file;
// the lead contract (what a client is told) is the start stage's, else the
// first answering stage's.
func TestBlueprint_StartAndLead(t *testing.T) {
	b, err := Parse([]byte(`
[agent]
start = "look"
[stages.answer]
mode = "output"
[stages.look]
[stages.look.transitions.answer]
hint = "h"
`), "bp.toml")
	if err != nil {
		t.Fatal(err)
	}
	if s := b.StartStage(); s == nil || s.Name != "look" {
		t.Errorf("StartStage = %+v, want look", s)
	}
	outs, err := CompileOutputs(b, outputspec.Levels{})
	if err != nil {
		t.Fatal(err)
	}
	if outs.Lead(b) != outs.ByStage["answer"] || outs.Lead(b) == nil {
		t.Error("Lead is not the answering stage's contract")
	}
	b.Agent.Start = "answer"
	if outs.Lead(b) != outs.ByStage["answer"] {
		t.Error("Lead is not the start stage's contract")
	}
	if (&Outputs{}).Lead(b) != nil || (&Blueprint{}).StartStage() != nil {
		t.Error("nothing to lead or start with, yet something came back")
	}
}

func TestFinding_String(t *testing.T) {
	f := Finding{Severity: SeverityError, Code: CodeUnknownKey, Key: "agent.nmae", Message: "unknown key"}
	if got := f.String(); got != "error[unknown-key] agent.nmae: unknown key" {
		t.Errorf("String = %q", got)
	}
	f.Key = ""
	if got := f.String(); got != "error[unknown-key] unknown key" {
		t.Errorf("String = %q", got)
	}
}

// summary renders findings as "severity[code] key", the part tests pin.
func summary(fs []Finding) []string {
	out := []string{}
	for _, f := range fs {
		out = append(out, strings.TrimSpace(f.Severity+"["+f.Code+"] "+f.Key))
	}
	return out
}

// A stage's model.effort must be a level; the user's effort wins over it
// where the stage takes the user's model.
func TestStage_Effort(t *testing.T) {
	_, err := Parse([]byte(`
[stages.a]
model = { effort = "extreme" }
`), "bp.toml")
	if err == nil || !strings.Contains(err.Error(), `stages.a.model.effort: "extreme" is not an effort level: want one of off, minimal, low, medium, high, xhigh, max`) {
		t.Errorf("Parse = %v, want the level refused", err)
	}
	b, err := Parse([]byte(`
[stages.open]
model = { effort = "low" }
[stages.pinned]
model = { models = ["x:y"], allow_user_default = false, effort = "high" }
[stages.plain]
`), "bp.toml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ stage, user, want string }{
		{"open", "", "low"}, {"open", "max", "max"},
		{"pinned", "", "high"}, {"pinned", "max", "high"},
		{"plain", "", ""}, {"plain", "medium", "medium"},
	} {
		if got := b.Stages[tt.stage].EffortFor(tt.user); got != tt.want {
			t.Errorf("stage %s, user effort %q: EffortFor = %q, want %q", tt.stage, tt.user, got, tt.want)
		}
	}
}
