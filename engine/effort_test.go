package engine_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/llm"
)

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
	facts := func(spec string) llm.ModelFact {
		switch spec {
		case "m:reasons":
			return llm.ModelFact{Efforts: []string{"off", "low", "medium", "high"}}
		case "m:plain":
			return llm.ModelFact{NoEffort: true}
		}
		return llm.ModelFact{}
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
type transitioner struct{ reqs []*llm.Request }

func (m *transitioner) Name() string { return "transitioner" }
func (m *transitioner) Stream(_ context.Context, req *llm.Request, _ func(llm.Delta) error) (*llm.Response, error) {
	m.reqs = append(m.reqs, req)
	for _, tool := range req.Tools {
		if tool.Name == "submit_output" {
			return &llm.Response{ToolCalls: []llm.ToolCall{{ID: "c", Name: "submit_output", Arguments: []byte(`{"content":"fine"}`)}}}, nil
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
			return &llm.Response{ToolCalls: []llm.ToolCall{{ID: "t", Name: "transition", Arguments: to}}}, nil
		}
	}
	return &llm.Response{Text: "no way out"}, nil
}
