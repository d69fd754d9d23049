package engine

import "github.com/coda-acp/coda/outputspec"

// Run statuses.
const (
	StatusAnswered         = "answered"
	StatusComplete         = "complete"
	StatusCompleteNoOutput = "complete (no output)"
	StatusFailed           = "failed"
	StatusCancelled        = "cancelled"
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
}
