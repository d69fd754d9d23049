package engine

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/coda-acp/coda/engine/blueprint"
	"github.com/coda-acp/coda/engine/llm"
)

// transition is the engine's tool for leaving a stage (DESIGN §6). A stage
// with transitions offers it, listing the ways out in the order the
// blueprint gives them (blueprint.Stage.WaysOut), then DONE under
// allow_complete.

// ways lists a stage's ways out, one a line, for the model.
func ways(s *blueprint.Stage) string {
	var b strings.Builder
	for _, to := range s.TransitionOrder {
		fmt.Fprintf(&b, "\n- %s: %s", to, s.Transitions[to].Hint)
	}
	if s.AllowComplete {
		fmt.Fprintf(&b, "\n- %s: the whole task is finished; end the run here", blueprint.Done)
	}
	return b.String()
}

// askWay is what the model is told when it ends a call without choosing
// a way out: the stage's transition_prompt, when it has one, with the
// ways out appended (DONE too, where allow_complete offers it, whether
// or not the prompt mentions it), as Leviath appends them.
func askWay(s *blueprint.Stage, targets []string) string {
	if own := strings.TrimSpace(s.TransitionPrompt); own != "" {
		return own + "\n\nCall transition with one of these ways out:" + ways(s)
	}
	return "Choose what comes next: call transition with one of: " + strings.Join(targets, ", ") + "."
}

func transitionSpec(s *blueprint.Stage, targets []string) llm.ToolSpec {
	enum, _ := json.Marshal(targets)
	desc := "Move on from this stage. Choose where to go next:" + ways(s)
	if own := strings.TrimSpace(s.TransitionPrompt); own != "" {
		desc = "Move on from this stage. " + own + "\n\nThe ways out:" + ways(s)
	}
	schema := `{"type":"object","properties":{"to":{"type":"string","enum":` + string(enum) + `},"reason":{"type":"string","description":"Why, in a sentence."}},"required":["to"]}`
	return llm.ToolSpec{Name: blueprint.ToolTransition, Description: desc, Schema: json.RawMessage(schema)}
}

// doneBeforeAnswer flags and says a DONE at stage that ends the run
// before the answer an agent's stages owe was handed in: allow_complete
// let the run end, and it ends without one.
func (r *run) doneBeforeAnswer(stage string) {
	if r.answer != nil || r.unavailable != "" {
		return
	}
	var owing []string
	for _, name := range r.t.Agent.Order {
		if r.t.Agent.Stages[name].OwesOutput() {
			owing = append(owing, name)
		}
	}
	if len(owing) == 0 {
		return
	}
	r.flag(FlagDoneBeforeAnswer)
	r.warn(fmt.Sprintf("stage %s ended the run with DONE (allow_complete) before any answer was handed in: the run ends without the answer %s owes", stage, strings.Join(owing, ", ")))
}

// waysOut are a visit's ways out (blueprint.Stage.WaysOut): the stage's
// transitions in the order the blueprint lists them, then DONE under
// allow_complete. The transition tool offers them.
type waysOut struct {
	stage   *blueprint.Stage
	targets []string
}

// fallback is where a visit goes when the model cannot choose: the first
// way out, or the run's end when that is DONE or there is none.
func (w waysOut) fallback() string {
	if len(w.targets) == 0 || w.targets[0] == blueprint.Done {
		return ""
	}
	return w.targets[0]
}

// offered reports whether the visit offers transition.
func (w waysOut) offered() bool { return len(w.targets) > 0 }

// is reports whether a call of the named tool is the visit's transition.
func (w waysOut) is(name string) bool {
	return name == blueprint.ToolTransition && w.offered()
}

// take runs call i of calls, a transition call. It returns the call's
// result and the chosen target, or "" when the call did not move: bad
// arguments, a target that is not a way out, or a stage that still owes
// its answer (owes: see repair.hold).
func (w waysOut) take(calls []llm.ToolCall, i int, rep *repair, owes bool) (ToolResult, string) {
	var args struct {
		To     string `json:"to"`
		Reason string `json:"reason"`
	}
	if err := json.Unmarshal(calls[i].Arguments, &args); err != nil {
		return Errorf(`transition takes {"to": "<stage>", "reason": "<why>"}: %v`, err), ""
	}
	if !slices.Contains(w.targets, args.To) {
		return Errorf("%q is not a way out of this stage. Choose one of: %s.", args.To, strings.Join(w.targets, ", ")), ""
	}
	if res, held := rep.hold(args.To, owes, calls[i+1:]); held {
		return res, ""
	}
	if args.To == blueprint.Done {
		return ToolResult{Output: "Ending the run here."}, blueprint.Done
	}
	return ToolResult{Output: "Moving on to " + args.To + "."}, args.To
}
