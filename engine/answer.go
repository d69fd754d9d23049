package engine

import "github.com/coda-acp/coda/store"

// Run statuses.
const (
	StatusAnswered         = "answered"
	StatusComplete         = "complete"
	StatusCompleteNoOutput = "complete (no output)"
	StatusFailed           = "failed"
	StatusCancelled        = "cancelled"
	// StatusUnavailable: the model declared the answer unavailable
	// (DESIGN §15); the run has no answer, and says why.
	StatusUnavailable = "unavailable"
)

// Record is the run's answer record (store.RunRecord.Record): its answer,
// or for a run without one a record with its status, flags, warnings and
// why, with empty content.
func (res *Result) Record() *store.Answer {
	rr := store.RunRecord{RunID: res.RunID, Status: res.Status, Flags: res.Flags, Warnings: res.Warnings,
		FinalOutput: res.Answer, NoAnswer: res.NoAnswer, Unavailable: res.Unavailable}
	return rr.Record()
}
