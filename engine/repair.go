package engine

import (
	"context"
	"fmt"

	"github.com/coda-acp/coda/engine/blueprint"
	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/outputspec"
)

// The repair loop (DESIGN §4, §6, §15): a stage that owes an answer is
// held to it. Every submission (a submit_output call, or a reply checked
// as the answer: reply.go) goes through check, so a refused one goes back
// to the model with its reasons, and the visit's Desk names an identical
// resubmission as one. A visit that would end without the answer (a reply
// that is not one, a reply cut at the token limit, a transition) is nudged
// and the model asked again, up to max_revisits times; after that the run
// carries on, flagged output_forced. Each nudge costs an iteration, and
// running out of iterations ends the visit first (stageVisit.loop).
//
// The repair budget: refused submissions in one visit, replies included,
// are capped by max_repairs (default 4). Past it, or at the second
// identical refused submission in a row, the visit stops repairing (flag
// repairs_exhausted), and the owed-output rule decides with one nudge at
// most: if a revisit remains, the model is told once more why the answer
// was refused and that this is its last attempt; the next refusal, or a
// reply that is not the answer, ends the visit without it (output_forced),
// and the model is not called again in this visit. A model stuck repeating
// itself so costs one call past the point it was caught, not the rest of
// max_iterations.

// A repairPhase is where a visit stands with its refused submissions. A
// visit goes through the phases in this order, skipping some, and never
// back.
type repairPhase uint8

const (
	// repairing: a refused submission goes back to the model with its
	// reasons, and the model tries again.
	repairing repairPhase = iota
	// stopped: the repairs ran out (repairs_exhausted): the owed-output
	// rule allows one more nudge at most (lastAttempt).
	stopped
	// lastChance: that nudge was sent; the next refusal, or a reply that
	// is not the answer, ends the visit without the answer.
	lastChance
	// halted: the visit ends now, for repairs.haltTo: the repairs and the
	// nudges ran out, or the model declared the answer unavailable.
	// Nothing more is repaired, or held back for the answer.
	halted
)

// repairs is a visit's account of its refused submissions.
type repairs struct {
	phase   repairPhase
	refused int // submissions refused in this visit
	// last is the key of the last submission when it was refused ("" after
	// an accepted one): the same key twice in a row stops the repairs.
	last string
	// haltTo is where a halted visit goes ("" ends the run).
	haltTo string
	// pending counts nudges said but not yet sent by a model call:
	// status.json counts only those that were sent.
	pending int
}

// owes reports whether the visit still owes its answer.
func (v *stageVisit) owes() bool { return v.stage.OwesOutput() && v.submitted == nil }

// check puts a submit_output call before the visit's Desk. Arguments cut
// while they streamed are refused here, unparsed: the answer is over its
// cap whatever the rest says.
func (v *stageVisit) check(ctx context.Context, tc llm.ToolCall) outputspec.Verdict {
	if tc.Dropped > 0 {
		return outputspec.Verdict{Feedback: fmt.Sprintf("The answer is too large: this submit_output call's arguments are %d bytes, over the %d-byte cap (the answer itself may be at most %d bytes). Nothing was recorded. Submit a shorter answer.",
			tc.Size(), llm.ArgsCap(tc.Name), outputspec.MaxAnswer)}
	}
	return v.checkSubmission(ctx, outputspec.Submission{Args: tc.Arguments, Typed: v.shaped.typed, Projected: v.shaped.family})
}

// checkSubmission checks a submission at the visit's Desk, in the run's
// workspace, and puts a passing answer to the taint gate.
func (v *stageVisit) checkSubmission(ctx context.Context, sub outputspec.Submission) outputspec.Verdict {
	if v.desk == nil {
		v.desk = outputspec.NewDesk(v.contract)
	}
	r := v.run
	sub.Root, sub.Stages, sub.Overwritten = r.t.Workspace.Cwd(), r.t.Agent.Order, r.overwritten
	verdict := v.desk.Submit(ctx, sub)
	if verdict.Accepted {
		v.capture(&verdict) // files kept by glob (capture.go), before the gate sees them
	}
	return v.gateAnswer(ctx, verdict) // the taint gate, before a passing answer is recorded
}

// refusal counts a refused submission; key identifies what was submitted
// (the answer's text, or the arguments when they did not parse). It
// reports whether the visit has stopped repairing.
func (v *stageVisit) refusal(key, feedback string) bool {
	r := v.run
	v.rep.refused++
	again := key == v.rep.last
	if !again {
		// A repeat's refusal only says it repeats: keep the reasons.
		r.refusal = feedback
	}
	v.rep.last = key
	if v.rep.phase != repairing {
		return true
	}
	switch {
	case again:
		r.warn(fmt.Sprintf("stage %s stopped repairing: the model submitted the same refused answer twice in a row", v.stage.Name))
	case v.rep.refused > v.stage.Repairs():
		r.warn(fmt.Sprintf("stage %s stopped repairing: %d refused submissions, past max_repairs = %d", v.stage.Name, v.rep.refused, v.stage.Repairs()))
	default:
		return false
	}
	v.rep.phase = stopped
	r.exhausted = true
	r.flag(FlagRepairsExhausted)
	return true
}

// accepted notes a passing submission: a refusal after it starts a new row.
func (v *stageVisit) accepted() { v.rep.last = "" }

// lastAttempt is what follows a refusal once the visit has stopped
// repairing: the one nudge nudge still allows, carrying the reasons; else
// the visit ends now, without the answer. It reports whether the model is
// asked again.
func (v *stageVisit) lastAttempt() bool {
	if v.nudge(fmt.Sprintf("Your answer was refused again, because:\n%s\nThis is your last attempt in this stage. %s.", v.run.refusal, v.howToAnswer("a corrected answer"))) {
		return true
	}
	v.halt(v.fallback())
	return false
}

// repairTools is what follows a response of tool calls, refusedBefore
// being the refusals counted before it: when its submit_output calls were
// refused, the results carry the reasons, so the model simply tries
// again, until the visit stops repairing (lastAttempt).
func (v *stageVisit) repairTools(refusedBefore int) {
	if v.rep.refused == refusedBefore {
		return
	}
	if v.owes() && (v.rep.phase == stopped || v.rep.phase == lastChance) {
		v.lastAttempt()
	}
}

// halt ends the visit now, going on to to ("" ends the run).
func (v *stageVisit) halt(to string) { v.rep.phase, v.rep.haltTo = halted, to }

// halted reports whether the visit ends now (repairs.haltTo says where).
func (v *stageVisit) halted() bool { return v.rep.phase == halted }

// fallback is where a visit goes when the model cannot choose: the first
// way out, or the run's end when that is DONE or there is none.
func (v *stageVisit) fallback() string {
	if len(v.targets) == 0 || v.targets[0] == blueprint.Done {
		return ""
	}
	return v.targets[0]
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
func (v *stageVisit) holdForAnswer(to string, later []llm.ToolCall) (ToolResult, bool) {
	if !v.owes() || submits(later) || v.revisits >= v.stage.Revisits() || v.rep.phase >= stopped {
		return ToolResult{}, false
	}
	v.revisits++
	v.rep.pending++
	return Errorf("Not yet: this stage owes the answer. Call submit_output with it first, then transition to %s.", to), true
}

// submits reports whether any of calls is a submit_output call.
func submits(calls []llm.ToolCall) bool {
	for _, c := range calls {
		if c.Name == blueprint.ToolSubmitOutput {
			return true
		}
	}
	return false
}

// nudge asks the model again for the owed answer, if revisits remain, and
// once at most after the visit stopped repairing. Else it records
// output_forced and returns false.
func (v *stageVisit) nudge(msg string) bool {
	if v.revisits < v.stage.Revisits() && v.rep.phase != lastChance {
		if v.rep.phase == stopped {
			v.rep.phase = lastChance // the one nudge after the repairs stopped
		}
		v.revisits++
		v.rep.pending++
		v.say(msg)
		return true
	}
	v.force()
	return false
}

// force records that the visit ends without the answer it owes.
func (v *stageVisit) force() {
	r := v.run
	r.flag(FlagOutputForced)
	r.forced = v.stage.Name
	r.warn(fmt.Sprintf("stage %s ended without the answer it owes (nudged %d time(s))", v.stage.Name, v.nudgesSent()))
}

// nudgesSent counts the nudges a model call carried.
func (v *stageVisit) nudgesSent() int { return v.revisits - v.rep.pending }

// forceOnLimit records output_forced for a visit that ran out of
// iterations still owing its answer.
func (v *stageVisit) forceOnLimit() {
	if v.owes() {
		v.run.flag(FlagOutputForced)
		v.run.forced = v.stage.Name
		v.run.warn(fmt.Sprintf("stage %s ended without the answer it owes", v.stage.Name))
	}
}
