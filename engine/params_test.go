package engine_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/llm"
)

// paramModel is a scripted model that records each call's parameters and
// timeout, and refuses a request carrying the parameter refuse as a
// reasoning model's server refuses temperature.
type paramModel struct {
	llm.Model
	refuse string

	mu       sync.Mutex
	params   []map[string]any
	timeouts []time.Duration
	refused  int
}

func (p *paramModel) Stream(ctx context.Context, req *llm.Request, onDelta func(llm.Delta) error) (*llm.Response, error) {
	p.mu.Lock()
	p.params = append(p.params, req.Params)
	p.timeouts = append(p.timeouts, req.Timeout)
	_, has := req.Params[p.refuse]
	if has {
		p.refused++
	}
	p.mu.Unlock()
	if has {
		return nil, &llm.MechanismError{Mechanism: llm.ParamMechanism(p.refuse), Err: errors.New("HTTP 400 Bad Request: Unsupported parameter: '" + p.refuse + "' is not supported with this model.")}
	}
	return p.Model.Stream(ctx, req, onDelta)
}

// specsAsked serves one model for every spec, and records the specs.
type specsAsked struct {
	m     llm.Model
	mu    sync.Mutex
	asked []string
}

func (s *specsAsked) Model(spec string) (llm.Model, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asked = append(s.asked, spec)
	return s.m, nil
}

// A stage's parameters and request_timeout_secs go with every call of its
// model, whatever the session picked for the stages that take the user's
// model; a parameter the model refuses is said once and dropped, not
// refused again on every call.
func TestRun_modelParams(t *testing.T) {
	const bp = `
[agent]
name = "params"
[stages.look]
[stages.look.model]
models = ["openai:o3"]
allow_user_default = false
request_timeout_secs = 900
parameters = { temperature = 0.2, seed = 7, provider = { order = ["deepinfra"] } }
[stages.look.transitions.answer]
hint = "Seen enough"
[stages.answer]
mode = "output"
`
	turn := newTurn(t, bp, `
[[turn]]
text = "Looking."
[[turn]]
[[turn.tool_calls]]
name = "transition"
arguments = { to = "answer" }
[[turn]]
text = "The answer."
`)
	pm := &paramModel{Model: turn.Models.(oneModel).m, refuse: "temperature"}
	specs := &specsAsked{m: pm}
	turn.Models = specs
	turn.Turn.UserModel = "script:elsewhere.toml" // the session's pick: not this stage's
	res := runTurn(context.Background(), turn, &events{})
	ended(t, res, engine.StatusAnswered, "end_turn")

	kept := map[string]any{"seed": int64(7), "provider": map[string]any{"order": []any{"deepinfra"}}}
	want := []map[string]any{
		{"temperature": 0.2, "seed": int64(7), "provider": map[string]any{"order": []any{"deepinfra"}}}, // refused
		kept, // the same call without it
		kept, // the next call of the stage
		nil,  // the answer stage has none
	}
	if diff := cmp.Diff(want, pm.params); diff != "" {
		t.Errorf("parameters per call (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]time.Duration{900 * time.Second, 900 * time.Second, 900 * time.Second, 0}, pm.timeouts); diff != "" {
		t.Errorf("timeouts per call (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"openai:o3", "openai:o3", "script:elsewhere.toml"}, specs.asked); diff != "" {
		t.Errorf("models asked for (-want +got):\n%s", diff)
	}
	if pm.refused != 1 {
		t.Errorf("temperature refused %d times, want once", pm.refused)
	}
	said := slices.DeleteFunc(slices.Clone(res.Warnings), func(w string) bool { return !strings.Contains(w, "refused the parameter temperature of stage look") })
	if len(said) != 1 {
		t.Errorf("warnings %q: want one about temperature", res.Warnings)
	}
}
