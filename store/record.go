package store

import (
	"encoding/json"

	"github.com/coda-acp/coda/internal/answer"
	"github.com/coda-acp/coda/internal/plainjson"
)

// RunRecord is run.json: a run as it stands, written when it starts and
// again when it ends.
type RunRecord struct {
	RunID   string `json:"runId"`
	Agent   string `json:"agent"`
	Session string `json:"session,omitempty"`
	// Stage is the stage the run is in while it runs, and the last it
	// entered once it ended.
	Stage string `json:"stage,omitempty"`
	// Model is the model the run was launched with (--model, the
	// session's pick or the default); a stage may pin its own.
	Model string `json:"model,omitempty"`
	// Process is the process that runs the run, or ran it (process.go).
	Process *Process `json:"process,omitempty"`
	// Resumes are the times `coda resume` took the run up again.
	Resumes    []Resume `json:"resumes,omitempty"`
	Started    string   `json:"started"`
	Ended      string   `json:"ended,omitempty"`
	Status     string   `json:"status"`
	StopReason string   `json:"stopReason,omitempty"`
	Error      string   `json:"error,omitempty"`
	Flags      []string `json:"flags"`
	Warnings   []string `json:"warnings"`
	Prompt     string   `json:"prompt"`
	Files      []string `json:"filesWritten"`
	// FinalOutput is the answer record, or null.
	FinalOutput *Answer `json:"finalOutput"`
	// Workers and Children are the run's fan_out workers and spawned
	// children; their records are under workers/NAME and children/NAME.
	Workers  []SubRun `json:"workers,omitempty"`
	Children []SubRun `json:"children,omitempty"`
	// Taint counts the taint gate's decisions; only when it is on.
	Taint *TaintCounts `json:"taint,omitempty"`
	// NoAnswer says why there is none; Unavailable is the model's reason
	// when it declared the answer unavailable.
	NoAnswer    string `json:"noAnswer,omitempty"`
	Unavailable string `json:"unavailable,omitempty"`
	// ClientGone says the client that asked went away before the run
	// ended (an editor killed mid-turn): the run went on to its end all
	// the same (DESIGN §21).
	ClientGone bool `json:"clientGone,omitempty"`
	// Usage is what the run's model calls used and cost, its workers'
	// and children's included; absent in a record from before it.
	Usage *Spend `json:"usage,omitempty"`
}

// An Answer is the answer record: one JSON shape used by `run --json`,
// `result --json`, run.json and PromptResponse._meta.coda.finalOutput.
type Answer struct {
	RunID   string `json:"runId"`
	Status  string `json:"status"`
	Stage   string `json:"stage"`
	Format  string `json:"format"`
	Content string `json:"content"`
	// Data is a json, yaml or toml answer's decoded value, beside its
	// bytes in Content (DESIGN §19); absent for other formats.
	Data      json.RawMessage   `json:"data,omitempty"`
	Truncated bool              `json:"truncated"`
	Flags     []string          `json:"flags"`
	Warnings  []string          `json:"warnings"`
	Artifacts []answer.Artifact `json:"artifacts"`
	// NoAnswer says why there is no answer, in a record made for a run
	// without one (RunRecord.Record); Unavailable is the model's reason
	// when it declared the answer unavailable.
	NoAnswer    string `json:"noAnswer,omitempty"`
	Unavailable string `json:"unavailable,omitempty"`
	// Usage is what the run's model calls used and cost, as its run.json
	// says: set where the record is printed (`coda run --json`, `coda
	// result --json`), absent where run.json holds it beside.
	Usage *Spend `json:"usage,omitempty"`
}

// Record is the run's answer record: its final output, or for a run
// without one a record with its status, flags, warnings and why, with
// empty content (DESIGN §1: `coda run --json` prints one for every run
// that started).
func (rr *RunRecord) Record() *Answer {
	if rr.FinalOutput != nil {
		return rr.FinalOutput
	}
	return &Answer{
		RunID: rr.RunID, Status: rr.Status, Flags: nonNil(rr.Flags), Warnings: nonNil(rr.Warnings),
		Artifacts: []answer.Artifact{}, NoAnswer: rr.NoAnswer, Unavailable: rr.Unavailable,
	}
}

// A Resume is one time a run was taken up again from its last finished
// stage (DESIGN §21): when, the stage it entered again, and the process
// that went on with it.
type Resume struct {
	At      string  `json:"at"`
	Stage   string  `json:"stage"`
	Process Process `json:"process"`
}

// A SubRun is a worker or child as run.json lists it.
type SubRun struct {
	Name   string   `json:"name"`
	Task   string   `json:"task"`
	Agent  string   `json:"agent,omitempty"` // a child's agent
	Status string   `json:"status"`
	Flags  []string `json:"flags"`
}

// TaintCounts are run.json's "taint": the calls the taint gate held and
// what became of them. Present only when the gate is on.
type TaintCounts struct {
	Gated   int `json:"gated"`
	Allowed int `json:"allowed"` // by the policy or the user
	Denied  int `json:"denied"`
	Waived  int `json:"waived"` // through by --yes, nobody being there to ask
}

// MarshalRecord encodes a record (run.json, an answer record) as people
// and pipelines read it: indented, ending in a newline, and with <, >
// and & as they are, not HTML-escaped.
func MarshalRecord(v any) ([]byte, error) { return plainjson.Marshal(v, "  ") }

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
