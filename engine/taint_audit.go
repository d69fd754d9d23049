package engine

import (
	"time"

	"github.com/coda-acp/coda/store"
)

// TaintAudit is one gated call, as stages/NNN-STAGE@V/taint_audit.json
// lists them. Private lines appear in it masked only.
type TaintAudit struct {
	Time string `json:"time"`
	// Sink is submit_output, or the tool called.
	Sink string `json:"sink"`
	// Sources name the private files the call would carry content of,
	// relative to the session's roots.
	Sources []string `json:"sources"`
	// Matches are the private lines found in the call, masked.
	Matches []string `json:"matches"`
	// Unchecked says the run read more private content than coda keeps
	// track of, so the call was gated without a line to show.
	Unchecked bool   `json:"unchecked,omitempty"`
	Policy    string `json:"policy"`
	Decision  string `json:"decision"`  // allowed | denied
	DecidedBy string `json:"decidedBy"` // policy | user | waiver
	Reason    string `json:"reason,omitempty"`
}

// audit records a decision: counted for run.json, logged (masked), and
// written to the visit's taint_audit.json, whole again after each call so
// that a run that dies keeps what it decided.
func (v *stageVisit) audit(rec TaintAudit, waived bool) {
	ts := v.run.taint
	rec.Time = time.Now().UTC().Format(time.RFC3339Nano)
	ts.mu.Lock()
	ts.counts.Gated++
	switch {
	case waived:
		ts.counts.Waived++
	case rec.Decision == decisionAllowed:
		ts.counts.Allowed++
	default:
		ts.counts.Denied++
	}
	ts.mu.Unlock()
	v.rec.audit = append(v.rec.audit, rec)
	v.run.log.Info("taint gate", "sink", rec.Sink, "sources", rec.Sources, "matches", rec.Matches, "decision", rec.Decision, "decidedBy", rec.DecidedBy, "reason", rec.Reason)
	v.rec.WriteAudit(v.rec.audit)
}

// snapshot is the run's counts, or nil when the gate is off.
func (ts *taintState) snapshot() *store.TaintCounts {
	if ts == nil {
		return nil
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	c := ts.counts
	return &c
}
