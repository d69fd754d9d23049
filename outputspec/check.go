package outputspec

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/coda-acp/coda/validators"
)

// MaxAnswer caps an answer's size; a longer one is cut and marked truncated.
const MaxAnswer = 256 << 10

// A Contract is a resolved Spec with its schema and validator compiled,
// ready to check submissions.
type Contract struct {
	spec   Spec
	format string // canonical
}

// Compile readies spec for checking. An error (a schema or validator that
// cannot be read or compiled) is a start-up error: it names the file and
// the problem in one line.
func Compile(spec Spec) (*Contract, error) {
	return &Contract{spec: spec, format: validators.Canonical(spec.Format)}, nil
}

// Spec returns the resolved spec the contract enforces.
func (c *Contract) Spec() Spec { return c.spec }

// Format is the canonical format label.
func (c *Contract) Format() string { return c.format }

// A Submission is one submit_output call.
type Submission struct {
	Args   json.RawMessage // the tool call's arguments
	Root   string          // artifacts must resolve inside it
	Stages []string        // the blueprint's stage names
}

// A Verdict is the outcome of checking a Submission.
type Verdict struct {
	Accepted bool
	// Feedback is what the model is told: the reasons for a refusal, or a
	// note on an accepted answer (such as its truncation).
	Feedback  string
	Content   string
	Truncated bool
	Flags     []string
	Warnings  []string
	Artifacts []Artifact
}

// An Artifact is a file handed back with the answer.
type Artifact struct {
	Name     string `json:"name"`
	Path     string `json:"path"`
	MimeType string `json:"mimeType"`
	Size     int64  `json:"size"`
	SHA256   string `json:"sha256"`
}

// Check runs the ordered checks of a submission.
func (c *Contract) Check(ctx context.Context, sub Submission) Verdict {
	var args struct {
		Content *string `json:"content"`
	}
	if err := json.Unmarshal(sub.Args, &args); err != nil || args.Content == nil {
		return refuse(`submit_output takes {"content": "<the answer>"}: the "content" string is missing`)
	}
	content := *args.Content
	if strings.TrimSpace(content) == "" {
		return refuse("The answer is empty: submit the answer itself.")
	}
	for _, s := range sub.Stages {
		if strings.TrimSpace(content) == s {
			return refuse(fmt.Sprintf("%q is the name of a stage, not an answer: submit the answer itself.", s))
		}
	}
	v := Verdict{Content: content}
	if err := validators.Check(c.format, content); err != nil {
		return refuse(fmt.Sprintf("The answer is not well-formed %s: %v", c.format, err))
	}
	v.Accepted = true
	return v
}

func refuse(reason string) Verdict { return Verdict{Feedback: reason} }
