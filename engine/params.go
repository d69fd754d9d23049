package engine

import (
	"maps"

	"github.com/coda-acp/coda/engine/llm"
)

// A stage's model parameters (DESIGN §25) go with each of its calls
// (llm.Request.Params, mapped per API by engine/provider), less any the
// model's server has refused in this session: that refusal is said once
// (learnRefused) and the parameter dropped, rather than a 400 every call.

// params are the stage's parameters for a call of the model spec names;
// nil when there are none to send.
func (t *modelCalls) params(spec string) map[string]any {
	ps := t.stage.Model.Parameters
	if len(ps) == 0 {
		return nil
	}
	out := maps.Clone(ps)
	for name := range ps {
		if t.support.refused(spec, llm.ParamMechanism(name)) {
			delete(out, name)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
