package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"time"

	"github.com/coda-acp/coda/engine/blueprint"
	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/taint"
	"github.com/coda-acp/coda/outputspec"
	"github.com/coda-acp/coda/store"
)

// Resuming a run from its last finished stage (DESIGN §21). After each
// stage visit that ends well, a turn's own run queues checkpoint.json in
// its record, after that visit's files: what later stages see of the
// earlier ones (their outcomes, as the preamble gives them), the plan, the
// flags, warnings and files so far, the answer if one was recorded, the
// model calls spent and the stage to enter next. `coda resume` gives it
// back as Turn.Resume: the run enters that stage again, as though it had
// never stopped; the visit that was cut short keeps its files, and the
// visits that follow are numbered after it.

// A Checkpoint is what a run left after its last finished stage visit.
type Checkpoint struct {
	// Blueprint is the hash of the blueprint the run ran (BlueprintHash):
	// a run is resumed only with the blueprint it began with.
	Blueprint string `json:"blueprint"`
	// Next is the stage the run enters next; "" when it ended there.
	Next        string            `json:"next"`
	Visits      map[string]int    `json:"visits"`
	Done        []CheckpointVisit `json:"done"`
	Plan        []PlanEntry       `json:"plan"`
	Flags       []string          `json:"flags"`
	Warnings    []string          `json:"warnings"`
	Written     []string          `json:"written"`
	Overwritten []string          `json:"overwritten"`
	Reply       string            `json:"reply"`
	Stop        string            `json:"stop,omitempty"`
	Unavailable string            `json:"unavailable,omitempty"`
	Answer      *store.Answer     `json:"answer"`
	Calls       int64             `json:"calls"`
	Workers     []store.SubRun    `json:"workers,omitempty"`
	Children    []store.SubRun    `json:"children,omitempty"`
	Tainted     taint.Session     `json:"tainted"`
	// Spent is what the run's calls used and cost so far (usage.go).
	Spent *store.Spend `json:"spent,omitempty"`
}

// A CheckpointVisit is a finished stage visit as later stages see it
// (stageOutcome), kept in a checkpoint.
type CheckpointVisit struct {
	Stage     string                `json:"stage"`
	Response  string                `json:"response"`
	Answer    string                `json:"answer"`
	Reports   []string              `json:"reports,omitempty"`
	Dir       string                `json:"dir"`
	Artifacts []outputspec.Artifact `json:"artifacts,omitempty"`
	Ended     string                `json:"ended"`
	Next      string                `json:"next,omitempty"`
	Model     string                `json:"model,omitempty"`
	Calls     int                   `json:"calls"`
	Usage     llm.Usage             `json:"usage"`
	Format    string                `json:"format,omitempty"`
	Data      string                `json:"data,omitempty"`
	Files     []string              `json:"files,omitempty"`
}

// A Resume is what a run taken up again starts from.
type Resume struct {
	// Checkpoint is what the run left (ReadCheckpoint); nil when no stage
	// of it finished, and then it starts again at its start stage.
	Checkpoint *Checkpoint
	// Record is run.json as the run left it: when it started, and its
	// earlier resumes.
	Record *store.RunRecord
	// Visits counts the stage visits its record holds (store.Visits).
	Visits int
}

// ReadCheckpoint reads what the run runID left after its last finished
// stage; nil, without an error, when it left nothing.
func ReadCheckpoint(st *store.Store, runID string) (*Checkpoint, error) {
	var cp Checkpoint
	err := st.ReadCheckpoint(runID, &cp)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &cp, nil
}

// BlueprintHash names a blueprint's content: its agent and stages as
// loaded, not where it was read from.
func BlueprintHash(b *blueprint.Blueprint) string {
	x := *b
	x.Dir, x.Source = "", ""
	data, err := json.Marshal(&x)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// checkpoint queues the run's checkpoint after a finished visit, next
// being the stage it goes on to, when the turn keeps them
// (Turn.Checkpoints). Workers and children leave none: they are resumed
// with their run.
func (r *run) checkpoint(next string) {
	if !r.t.Checkpoints || r.sub.depth > 0 || r.rec.Dir() == "" {
		return
	}
	if r.hash == "" {
		r.hash = BlueprintHash(r.t.Agent)
	}
	cp := &Checkpoint{
		Blueprint: r.hash, Next: next, Visits: r.visits, Plan: r.planCopy(),
		Flags: nonNil(r.flags), Warnings: nonNil(r.warnings), Written: nonNil(r.written), Overwritten: nonNil(r.overwritten),
		Reply: r.mask(r.reply), Stop: r.stop, Unavailable: r.unavailable, Answer: r.answer, Calls: r.share.calls.Load(),
		Workers: r.sub.workers, Children: append(append([]store.SubRun(nil), r.resumedChildren...), r.childRecords()...),
		Tainted: r.taint.Session(), Spent: new(r.spent.total()),
	}
	for _, o := range r.done {
		cp.Done = append(cp.Done, CheckpointVisit{
			Stage: o.stage, Response: o.response, Answer: o.answer, Reports: o.reports, Dir: o.dir, Artifacts: o.artifacts,
			Ended: o.ended, Next: o.next, Model: o.model, Calls: o.calls, Usage: o.usage, Format: o.format, Data: o.data, Files: o.files,
		})
	}
	r.rec.Checkpoint(cp) // encoded now
}

// resume puts back what the turn's Resume says the run had done, before
// the run goes on: its record numbered after the visits it holds, and the
// run's state as its checkpoint left it. It returns the stage to enter.
func (r *run) resume() *blueprint.Stage {
	rs := r.t.Resume
	started, err := time.Parse(time.RFC3339Nano, rs.Record.Started)
	if err != nil {
		started = time.Now().UTC()
	}
	cp := rs.Checkpoint
	if cp == nil {
		start := r.t.Agent.StartStage()
		r.rec.Resumed(started, rs.Visits, rs.Record.Resumes, start.Name)
		return start
	}
	r.rec.Resumed(started, rs.Visits, rs.Record.Resumes, cp.Next)
	for name, n := range cp.Visits {
		r.visits[name] = n
	}
	for _, v := range cp.Done {
		r.done = append(r.done, stageOutcome{
			stage: v.Stage, response: v.Response, answer: v.Answer, reports: v.Reports, dir: v.Dir, artifacts: v.Artifacts,
			ended: v.Ended, next: v.Next, model: v.Model, calls: v.Calls, usage: v.Usage, format: v.Format, data: v.Data, files: v.Files,
		})
	}
	r.plan = cp.Plan
	r.flags, r.warnings = append(r.flags, missing(r.flags, cp.Flags)...), append(r.warnings, missing(r.warnings, cp.Warnings)...)
	r.written, r.overwritten = cp.Written, cp.Overwritten
	r.reply, r.stop, r.unavailable, r.answer = cp.Reply, cp.Stop, cp.Unavailable, cp.Answer
	r.share.calls.Store(cp.Calls)
	r.spent.restore(cp.Spent)
	r.sub.workers, r.resumedChildren = cp.Workers, cp.Children
	return r.t.Agent.Stages[cp.Next] // nil when the run had ended: it ends now
}
