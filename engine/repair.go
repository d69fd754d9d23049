package engine

import (
	"context"
	"fmt"

	"github.com/coda-acp/coda/outputspec"
)

// The repair loop (DESIGN §4, §6): a stage that owes an answer is held to
// it. Every submission goes through check, so a refused one goes back to
// the model with its reasons, and the visit's Desk names an identical
// resubmission as one. A visit that would end without the answer (a
// reply without a tool call, a reply cut at the token limit, a transition)
// is nudged and the model asked again, up to max_revisits times; after
// that the run carries on, flagged output_forced. Each nudge costs an
// iteration, and running out of iterations ends the visit first
// (stageVisit.loop).

// owes reports whether the visit still owes its answer.
func (v *stageVisit) owes() bool { return v.stage.OwesOutput() && v.submitted == nil }

// check puts a submit_output call before the visit's Desk. Arguments cut
// while they streamed are refused here, unparsed: the answer is over its
// cap whatever the rest says.
func (v *stageVisit) check(ctx context.Context, tc ToolCall) outputspec.Verdict {
	if tc.Dropped > 0 {
		return outputspec.Verdict{Feedback: fmt.Sprintf("The answer is too large: this submit_output call's arguments are %d bytes, over the %d-byte cap (the answer itself may be at most %d bytes). Nothing was recorded. Submit a shorter answer.",
			tc.Size(), ArgsCap(tc.Name), outputspec.MaxAnswer)}
	}
	if v.desk == nil {
		v.desk = outputspec.NewDesk(v.contract)
	}
	r := v.run
	verdict := v.desk.Submit(ctx, outputspec.Submission{Args: tc.Arguments, Root: r.t.Workspace.Cwd(), Stages: r.t.Agent.Order, Overwritten: r.overwritten})
	return v.gateAnswer(ctx, verdict) // the taint gate, before a passing answer is recorded
}

// repairReply is what follows a reply without a tool call in a visit that
// owes its answer. It reports whether the model is asked again.
func (v *stageVisit) repairReply(resp *Response) bool {
	if resp.StopReason == StopMaxTokens {
		// Not the model's choice: it ran out of room. This costs an
		// iteration but no revisit.
		v.say("Your reply was cut off at the model's output token limit before you submitted the answer. Call submit_output now with a shorter answer.")
		return true
	}
	return v.nudge("You have not submitted the answer yet. Call submit_output with the answer now.")
}

// repairLeave is what follows the model's choice to leave for to while
// the answer is owed (its transition went through: see holdForAnswer). It
// reports whether the model is asked again instead.
func (v *stageVisit) repairLeave(to string) bool {
	return v.nudge(fmt.Sprintf("You chose to move on to %s, but this stage owes the answer: call submit_output with it first.", to))
}

// holdForAnswer refuses a transition to to while the answer is owed and
// none of the calls after it submits one, saying so as the call's result
// rather than pretending the move happened. It costs a revisit; with none
// left the transition goes through (and repairLeave forces the output).
func (v *stageVisit) holdForAnswer(to string, later []ToolCall) (ToolResult, bool) {
	if !v.owes() || submits(later) || v.revisits >= v.stage.Revisits() {
		return ToolResult{}, false
	}
	v.revisits++
	return Errorf("Not yet: this stage owes the answer. Call submit_output with it first, then transition to %s.", to), true
}

// submits reports whether any of calls is a submit_output call.
func submits(calls []ToolCall) bool {
	for _, c := range calls {
		if c.Name == ToolSubmitOutput {
			return true
		}
	}
	return false
}

// nudge asks the model again for the owed answer, if revisits remain. When
// none remain it records output_forced and returns false.
func (v *stageVisit) nudge(msg string) bool {
	if v.revisits < v.stage.Revisits() {
		v.revisits++
		v.say(msg)
		return true
	}
	v.run.flag(FlagOutputForced)
	v.run.warn(fmt.Sprintf("stage %s ended without the answer it owes (nudged %d time(s))", v.stage.Name, v.revisits))
	return false
}

// forceOnLimit records output_forced for a visit that ran out of
// iterations still owing its answer.
func (v *stageVisit) forceOnLimit() {
	if v.owes() {
		v.run.flag(FlagOutputForced)
		v.run.warn(fmt.Sprintf("stage %s ended without the answer it owes", v.stage.Name))
	}
}
