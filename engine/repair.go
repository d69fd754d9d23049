package engine

import (
	"fmt"

	"github.com/coda-acp/coda/engine/blueprint"
	"github.com/coda-acp/coda/engine/llm"
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
// The repair owns that account; the visit asks it and says to the model
// what it answers.
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
	// halted: the visit ends now, for repair.haltTo: the repairs and the
	// nudges ran out, or the model declared the answer unavailable.
	// Nothing more is repaired, or held back for the answer.
	halted
)

// runNotes is what a visit's owners tell the run as they decide: a
// warning, a flag (*run is one). Each goes out when it arises.
type runNotes interface {
	warn(string)
	flag(string)
}

// A repair is a visit's repair loop: its refused submissions, its nudges
// and where it stands (repairPhase). It decides; the visit says to the
// model what it returns (a nudge: "" when the model is not asked again).
type repair struct {
	stage                   string // the stage's name, for the warnings
	maxRevisits, maxRepairs int    // the stage's max_revisits and max_repairs
	notes                   runNotes

	phase   repairPhase
	refused int // submissions refused in this visit
	// last is the key of the last submission when it was refused ("" after
	// an accepted one): the same key twice in a row stops the repairs.
	last string
	// reasons are the last refusal's, but a repeat's (which only says it
	// repeats).
	reasons string
	// haltTo is where a halted visit goes ("" ends the run).
	haltTo string
	// revisits counts the revisits spent: nudges said and transitions
	// held. pending counts those not yet sent by a model call:
	// status.json counts only those that were sent.
	revisits, pending int
	// forced says the visit ends without the answer it owes; exhausted,
	// that it stopped repairing (the run's no-answer line says which).
	forced, exhausted bool
}

// newRepair is the repair loop of a visit of stage, with its limits.
func newRepair(stage string, maxRevisits, maxRepairs int, notes runNotes) repair {
	return repair{stage: stage, maxRevisits: maxRevisits, maxRepairs: maxRepairs, notes: notes}
}

// refusal counts a refused submission; key identifies what was submitted
// (the answer's text, or the arguments when they did not parse). It
// reports whether the visit has stopped repairing.
func (p *repair) refusal(key, feedback string) bool {
	p.refused++
	again := key == p.last
	if !again {
		// A repeat's refusal only says it repeats: keep the reasons.
		p.reasons = feedback
	}
	p.last = key
	if p.phase != repairing {
		return true
	}
	switch {
	case again:
		p.notes.warn(fmt.Sprintf("stage %s stopped repairing: the model submitted the same refused answer twice in a row", p.stage))
	case p.refused > p.maxRepairs:
		p.notes.warn(fmt.Sprintf("stage %s stopped repairing: %d refused submissions, past max_repairs = %d", p.stage, p.refused, p.maxRepairs))
	default:
		return false
	}
	p.phase = stopped
	p.exhausted = true
	p.notes.flag(FlagRepairsExhausted)
	return true
}

// accepted notes a passing submission: a refusal after it starts a new row.
func (p *repair) accepted() { p.last = "" }

// lastAttempt is what follows a refusal once the visit has stopped
// repairing: the one nudge nudge still allows, carrying the reasons, how
// saying how to hand in a corrected answer; else the visit halts now for
// fallback, without the answer, and lastAttempt returns "".
func (p *repair) lastAttempt(how, fallback string) string {
	if msg := p.nudge(fmt.Sprintf("Your answer was refused again, because:\n%s\nThis is your last attempt in this stage. %s.", p.reasons, how)); msg != "" {
		return msg
	}
	p.halt(fallback)
	return ""
}

// afterTools is what follows a response of tool calls, refusedBefore
// being the refusals counted before it: when its submit_output calls were
// refused, the results carry the reasons, so the model simply tries
// again, until the visit stops repairing (lastAttempt).
func (p *repair) afterTools(refusedBefore int, owes bool, how, fallback string) string {
	if p.refused == refusedBefore || !owes || (p.phase != stopped && p.phase != lastChance) {
		return ""
	}
	return p.lastAttempt(how, fallback)
}

// halt ends the visit now, going on to to ("" ends the run).
func (p *repair) halt(to string) { p.phase, p.haltTo = halted, to }

// halted reports whether the visit ends now (haltTo says where).
func (p *repair) halted() bool { return p.phase == halted }

// leave is what follows the model's choice to leave for to while the
// answer is owed (its transition went through: see hold): the nudge the
// model is asked again with, or "".
func (p *repair) leave(to string) string {
	return p.nudge(fmt.Sprintf("You chose to move on to %s, but this stage owes the answer: call submit_output with it first.", to))
}

// hold refuses a transition to to while the answer is owed and none of
// the calls after it submits one, saying so as the call's result rather
// than pretending the move happened. It costs a revisit; with none left
// the transition goes through (and leave forces the output).
func (p *repair) hold(to string, owes bool, later []llm.ToolCall) (ToolResult, bool) {
	if !owes || submits(later) || p.revisits >= p.maxRevisits || p.phase >= stopped {
		return ToolResult{}, false
	}
	p.revisits++
	p.pending++
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

// nudge asks the model again for the owed answer with msg, which it
// returns, if revisits remain, and once at most after the visit stopped
// repairing. Else it records output_forced and returns "".
func (p *repair) nudge(msg string) string {
	if p.revisits < p.maxRevisits && p.phase != lastChance {
		if p.phase == stopped {
			p.phase = lastChance // the one nudge after the repairs stopped
		}
		p.revisits++
		p.pending++
		return msg
	}
	p.force()
	return ""
}

// force records that the visit ends without the answer it owes.
func (p *repair) force() {
	p.notes.flag(FlagOutputForced)
	p.forced = true
	p.notes.warn(fmt.Sprintf("stage %s ended without the answer it owes (nudged %d time(s))", p.stage, p.nudgesSent()))
}

// forceOnLimit records output_forced for a visit that ran out of
// iterations still owing its answer.
func (p *repair) forceOnLimit(owes bool) {
	if owes {
		p.notes.flag(FlagOutputForced)
		p.forced = true
		p.notes.warn(fmt.Sprintf("stage %s ended without the answer it owes", p.stage))
	}
}

// send is a model call taking the nudges said since the last one: it
// reports whether there were any.
func (p *repair) send() bool {
	nudged := p.pending > 0
	p.pending = 0
	return nudged
}

// nudgesSent counts the nudges a model call carried.
func (p *repair) nudgesSent() int { return p.revisits - p.pending }

// lastRepair reports whether the next submission is the visit's last
// chance: it stopped repairing, or the next refusal would stop it.
func (p *repair) lastRepair() bool {
	return p.phase >= stopped || p.refused > 0 && p.refused >= p.maxRepairs
}

// keep leaves in the run's ending what the visit of stage decided about
// its answer, for the no-answer line (noanswer.go).
func (e *ending) keep(p *repair, stage string) {
	if p.forced {
		e.forced = stage
	}
	if p.exhausted {
		e.exhausted = true
	}
	if p.reasons != "" {
		e.refusal = p.reasons
	}
}
