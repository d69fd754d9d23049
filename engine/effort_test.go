package engine_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/blueprint"
)

// The blueprint's effort levels are the engine's.
func TestEffortLevels(t *testing.T) {
	want := []string{engine.EffortOff, engine.EffortMinimal, engine.EffortLow, engine.EffortMedium, engine.EffortHigh, engine.EffortXHigh, engine.EffortMax}
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
		if got := engine.NearestEffort(tt.effort, tt.takes); got != tt.want {
			t.Errorf("NearestEffort(%q, %v) = %q, want %q", tt.effort, tt.takes, got, tt.want)
		}
	}
}

// Each call asks for its stage's effort: the stage's own model.effort, the
// user's where the stage takes the user's model, the nearest level the
// called model takes (said once), none to a model that does not reason.
func TestRun_effortPerStage(t *testing.T) {
	const agent = `
[agent]
name = "efforts"
[stages.plan]
model = { models = ["m:reasons"], effort = "xhigh" }
[stages.plan.transitions.pinned]
hint = "go on"
[stages.pinned]
model = { models = ["m:reasons"], allow_user_default = false, effort = "low" }
[stages.pinned.transitions.plain]
hint = "go on"
[stages.plain]
model = { models = ["m:plain"], allow_user_default = false, effort = "high" }
[stages.plain.transitions.answer]
hint = "go on"
[stages.answer]
mode = "output"
model = { models = ["m:reasons"] }
`
	facts := func(spec string) engine.ModelFact {
		switch spec {
		case "m:reasons":
			return engine.ModelFact{Efforts: []string{"off", "low", "medium", "high"}}
		case "m:plain":
			return engine.ModelFact{NoEffort: true}
		}
		return engine.ModelFact{}
	}
	for _, tt := range []struct {
		name, user string
		want       []string // plan, pinned, plain, answer
		warn       []string
	}{
		{"the stages' own", "", []string{"high", "low", "", ""}, []string{"asks effort xhigh of m:reasons, which takes off, low, medium, high: it is sent high", "stage plain asks effort high of m:plain, which does not reason"}},
		{"the user's where the stage takes it", "medium", []string{"medium", "low", "", "medium"}, []string{"stage plain asks effort high of m:plain"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			turn := newTurn(t, agent, "")
			rec := &transitioner{}
			turn.Models = models{"m:reasons": rec, "m:plain": rec}
			turn.ModelFacts = facts
			turn.UserModel, turn.UserEffort = "", tt.user
			res := runTurn(context.Background(), turn, &events{})
			if res.Status != engine.StatusAnswered {
				t.Fatalf("Run = %s (%v), want answered", res.Status, res.Err)
			}
			var got []string
			for _, req := range rec.reqs {
				got = append(got, req.Effort)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("efforts sent = %q, want %q", got, tt.want)
			}
			for _, w := range tt.warn {
				if !slices.ContainsFunc(res.Warnings, func(s string) bool { return strings.Contains(s, w) }) {
					t.Errorf("warnings %q lack %q", res.Warnings, w)
				}
			}
		})
	}
}

// transitioner goes on to the next stage's first transition until the
// stage can submit, then submits; it keeps the requests.
type transitioner struct{ reqs []*engine.Request }

func (m *transitioner) Name() string { return "transitioner" }
func (m *transitioner) Stream(_ context.Context, req *engine.Request, _ func(engine.Delta) error) (*engine.Response, error) {
	m.reqs = append(m.reqs, req)
	for _, tool := range req.Tools {
		if tool.Name == "submit_output" {
			return &engine.Response{ToolCalls: []engine.ToolCall{{ID: "c", Name: "submit_output", Arguments: []byte(`{"content":"fine"}`)}}}, nil
		}
	}
	for _, tool := range req.Tools {
		var schema struct {
			Properties struct {
				To struct{ Enum []string } `json:"to"`
			} `json:"properties"`
		}
		if tool.Name == "transition" && json.Unmarshal(tool.Schema, &schema) == nil && len(schema.Properties.To.Enum) > 0 {
			to, _ := json.Marshal(map[string]string{"to": schema.Properties.To.Enum[0]})
			return &engine.Response{ToolCalls: []engine.ToolCall{{ID: "t", Name: "transition", Arguments: to}}}, nil
		}
	}
	return &engine.Response{Text: "no way out"}, nil
}
