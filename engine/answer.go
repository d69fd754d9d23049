package engine

import "github.com/coda-acp/coda/outputspec"

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

// An Answer is the answer record: one JSON shape used by `run --json`,
// `result --json`, run.json and PromptResponse._meta.coda.finalOutput.
type Answer struct {
	RunID     string                `json:"runId"`
	Status    string                `json:"status"`
	Stage     string                `json:"stage"`
	Format    string                `json:"format"`
	Content   string                `json:"content"`
	Truncated bool                  `json:"truncated"`
	Flags     []string              `json:"flags"`
	Warnings  []string              `json:"warnings"`
	Artifacts []outputspec.Artifact `json:"artifacts"`
	// NoAnswer says why there is no answer, in a record made for a run
	// without one (Result.Record); Unavailable is the model's reason when
	// it declared the answer unavailable.
	NoAnswer    string `json:"noAnswer,omitempty"`
	Unavailable string `json:"unavailable,omitempty"`
}

// Record is the run's answer record: its answer, or for a run without one
// a record with its status, flags, warnings and why, with empty content
// (DESIGN §1: `coda run --json` prints one for every run that started).
func (res *Result) Record() *Answer {
	if res.Answer != nil {
		return res.Answer
	}
	return &Answer{
		RunID: res.RunID, Status: res.Status, Flags: nonNil(res.Flags), Warnings: nonNil(res.Warnings),
		Artifacts: []outputspec.Artifact{}, NoAnswer: res.NoAnswer, Unavailable: res.Unavailable,
	}
}

// Record is the run's answer record as Result.Record makes it, read back
// from its run.json.
func (rr *RunRecord) Record() *Answer {
	res := Result{RunID: rr.RunID, Status: rr.Status, Flags: rr.Flags, Warnings: rr.Warnings,
		Answer: rr.FinalOutput, NoAnswer: rr.NoAnswer, Unavailable: rr.Unavailable}
	return res.Record()
}
