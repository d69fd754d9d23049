package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coda-acp/coda/engine/blueprint"
	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/taint"
	"github.com/coda-acp/coda/internal/telemetry"
	"github.com/coda-acp/coda/outputspec"
	"github.com/coda-acp/coda/store"
)

// A Sink receives what a turn produces, in order. acp implements it with
// session/update notifications; `coda run` with the terminal; tests with a
// slice. An error from Emit stops the turn; acp's sink never returns one
// for a client that is gone, so that the turn runs on to its answer
// (DESIGN §21).
type Sink interface {
	Emit(ctx context.Context, ev Event) error
}

// defaultMaxModelCalls caps the model calls of one run.
const defaultMaxModelCalls = 200

// An Exchange is one earlier turn of the session: its prompt and its final
// answer (or, without one, the last reply), and the run that recorded it,
// which a stage's prompt.md names instead of writing the turn out again.
type Exchange struct {
	Prompt string
	Answer string
	// RunID is not stored with the exchange: acp's session file keeps it
	// beside.
	RunID string `json:"-"`
	// Masked says the prompt or answer is masked of a secret (history.go's
	// maskHistory, Result.Mask): the run's own record has it in clear, so
	// a later prompt.md writes it out as the model was sent it instead of
	// naming the run.
	Masked bool `json:"-"`
	// NotShown, on the first exchange KeepHistory kept, counts the
	// session's exchanges before it that were cut, and FirstNotShown is
	// the first line of the first of their prompts (history.go). Neither
	// is stored: keeping the stored history again counts them again.
	NotShown      int    `json:"-"`
	FirstNotShown string `json:"-"`
	// Transcript is the turn's conversation as it was sent, which the
	// next turn is sent again (transcript.go); nil for a turn kept
	// without it, which is shown by its prompt and answer.
	Transcript []llm.Message `json:"-"`
}

// An Engine runs prompt turns. It holds what lasts as long as the process
// (the models, the tools, the record store, the limits, the log), is built
// once where coda starts (cmd/coda: serving, `coda run`, `coda demo`) and
// is shared by every turn, and by the workers and children those turns
// start; Run takes what one prompt is (a Turn). The zero value of every
// field but Models works. An Engine is not changed once it runs turns.
type Engine struct {
	// Models turns model specs into models; required.
	Models llm.Models
	// Tools are coda's own tools, by name (engine/tools); a turn adds its
	// session's (Turn.Tools).
	Tools map[string]Tool
	// Agents loads the agents a stage's spawn list names
	// (subrun_spawn.go); nil refuses every spawn_agent call.
	Agents blueprint.Loader
	// Store keeps the run records (STATE/runs/RUN-ID); nil keeps none.
	Store *store.Store
	// IDs makes ids: "r" run ids, "m" message and "t" tool call ids (and
	// acp's "s" session ids). Nil makes them random, run ids sortable.
	IDs func(prefix string) string
	// MaxModelCalls caps the model calls of one turn, its workers' and
	// children's with it; 0 is defaultMaxModelCalls.
	MaxModelCalls int
	// MaxTools caps the tools one model request offers, coda's own and
	// the session's MCP tools together; 0 is DefaultMaxTools
	// (mcp_tools.go).
	MaxTools int
	// MaxArtifactCopy is the largest artifact a run copies into its
	// record (the config's [mime] max_part_bytes); 0 is 10 MiB (keep.go).
	MaxArtifactCopy int64
	// Log is where the engine logs; nil discards.
	Log *slog.Logger
	// Taint is what the launch says of the taint gate (taint.go).
	Taint taint.Launch
	// ModelFacts says what is known of a model before calling it (which
	// cannot call tools: DESIGN §15); nil knows nothing.
	ModelFacts llm.ModelFacts
	// NoProjectInstructions keeps the working directory's AGENTS.md out
	// of every stage's prompt (--no-project-instructions; instructions.go).
	NoProjectInstructions bool
	// Tracer starts the spans of turns, stages, model and tool calls
	// (trace.go); nil is telemetry.Off.
	Tracer telemetry.Tracer
}

// NewID makes an id with prefix (see Engine.IDs).
func (e *Engine) NewID(prefix string) string {
	if e.IDs != nil {
		return e.IDs(prefix)
	}
	if prefix == "r" {
		return newRunID()
	}
	return randomID(prefix)
}

func (e *Engine) maxModelCalls() int {
	if e.MaxModelCalls > 0 {
		return e.MaxModelCalls
	}
	return defaultMaxModelCalls
}

func (e *Engine) maxTools() int {
	if e.MaxTools > 0 {
		return e.MaxTools
	}
	return DefaultMaxTools
}

func (e *Engine) log() *slog.Logger {
	if e.Log == nil {
		return discard
	}
	return e.Log
}

var discard = slog.New(slog.DiscardHandler)

// A Turn is what one prompt is: what a run is asked, in which session and
// workspace, and how its answer is shaped.
type Turn struct {
	// RunID names the run and its record (Engine.NewID("r")); "" keeps
	// no record.
	RunID     string
	SessionID string
	Agent     *blueprint.Blueprint
	// Outputs are the stages' compiled answer contracts (see CompileOutputs).
	Outputs *blueprint.Outputs
	Prompt  string
	History []Exchange
	// Images are the prompt's attached images (CheckImage): every stage's
	// task message of this turn carries them.
	Images []llm.Image
	// Warnings are the caller's, given with the run's own (an MCP server
	// that failed to start).
	Warnings []string

	// UserModel is the --model spec, or the session's pick; it overrides
	// stage models unless a stage pins them. DefaultModel is used when a
	// stage names none.
	UserModel    string
	DefaultModel string
	// UserEffort is the --effort level, or the session's effort option's;
	// like UserModel it wins over a stage's own effort unless the stage
	// pins its models (effort.go). "" leaves each stage its own.
	UserEffort string

	// Tools are the session's own tools (its MCP servers'), offered beside
	// the engine's; one of the same name takes its place.
	Tools     map[string]Tool
	Workspace Workspace
	// Withhold, when set, holds back the tools it answers true for: they
	// are not offered, and a stage listing them is not warned about (a
	// session's read-only mode).
	Withhold func(Tool) bool

	// PromptSources are the prompt's embedded resources, which the taint
	// gate takes in when their paths are private.
	PromptSources []taint.Source
	// Tainted is what the session's earlier turns left the taint gate
	// (Result.Tainted): taint belongs to the session, so the turn's gate
	// starts from it.
	Tainted taint.Session
	// Private is what the private files under the session's roots hold,
	// found once a session and kept current (taint.Index): the gate's, and
	// what masks the record's, look for secrets in tool results. nil: the
	// turn walks the roots for itself.
	Private *taint.Index
	// ToolSupport is what the session has learned of its models' tool
	// calling (notools.go); nil learns for this turn alone.
	ToolSupport *ToolSupport
	// Steer, when set, gives what the user sent to steer the turn since
	// it last asked (DESIGN §22): the model reads it at its next call, as
	// the user's words. Only the turn's own stages take it; its workers
	// and children do not.
	Steer func() []string
	// ClientGone, when set, says whether whoever the sink shows the turn
	// to has gone away (acp: a write to stdout failed). The turn runs on
	// to its answer all the same (DESIGN §21); its record says so.
	ClientGone func() bool
	// Checkpoints has the run leave a checkpoint in its record after each
	// finished stage visit, which `coda resume` goes on from (resume.go):
	// `coda run` keeps them; a served turn does not, its record a file
	// lighter per visit.
	Checkpoints bool
	// Resume, when set, takes up again the run RunID names from what it
	// left (resume.go) rather than starting it.
	Resume *Resume
}

// A Result is how a run ended.
type Result struct {
	RunID      string
	Status     string
	StopReason string // an ACP stop reason: end_turn, max_tokens, max_turn_requests, refusal, cancelled
	Flags      []string
	Warnings   []string
	Answer     *store.Answer // nil without one
	// LastReply is the model's last text, for the session's history when
	// there is no answer.
	LastReply string
	// Written lists the files the run's tools changed.
	Written []string
	// Err is a model or tool failure that ended the run.
	Err error
	// Usage is what the run's model calls used and cost, its workers'
	// and children's, repairs and all (usage.go).
	Usage store.Spend
	// Workers and Children are the run's fan_out workers and spawned
	// children, as run.json lists them (DESIGN §12).
	Workers, Children []store.SubRun
	// Taint counts the taint gate's decisions; nil when the gate is off.
	Taint *store.TaintCounts
	// Tainted is what the session keeps of the gate for its next turn
	// (Turn.Tainted); zero when the gate is off.
	Tainted taint.Session
	// NoAnswer says in one line why the run has no answer; "" when it has
	// one (noanswer.go). Unavailable is the model's reason when it declared
	// the answer unavailable (status unavailable).
	NoAnswer    string
	Unavailable string
	// ClientGone says the client went away before the turn ended
	// (Turn.ClientGone): nobody saw its end as it streamed.
	ClientGone bool
	// HistoryCut counts the session's earlier turns, the oldest of
	// Turn.History, that compaction cut from what the run was sent: the
	// session forgets them (ForgetHistory), so that its next turn starts
	// as this one's last request did rather than being cut again.
	HistoryCut int

	rec     *store.Run       // the record, being finished (Recorded)
	head    *store.RunRecord // run.json as the run ended (Recorded amends it)
	gone    func() bool      // Turn.ClientGone
	secrets *taint.Secrets
	release func() // deletes the turn's uploads (Recorded); nil when none
	// transcript, transcriptOpen and visits are the run's for the
	// session's Exchange (transcript.go).
	transcript     []llm.Message
	transcriptOpen bool
	visits         int
}

// Mask is text as the session keeps it of the turn for its later ones
// (DESIGN §13, §19): masked of what the turn read of private files, and of
// the secrets of any private file under the roots that text carries. The
// session's file keeps the turn's answer and its streamed commentary so,
// gate on or off: the user saw them as they were sent; the next turn's
// request, a load's replay and the file on disk get them masked.
func (res *Result) Mask(text string) string { return res.secrets.MaskFound(text) }

// Flags the engine records on runs; the checks' own (truncated,
// schema_unchecked, validator_error) come from outputspec.
const (
	FlagOutputForced     = "output_forced"
	FlagMaxIterationsHit = "max_iterations_hit"
	// FlagAnswerFromReply: the answer is a reply checked as a submission
	// (reply.go); FlagRepairsExhausted: a visit stopped repairing refused
	// submissions (repair.go).
	FlagAnswerFromReply  = "answer_from_reply"
	FlagRepairsExhausted = "repairs_exhausted"
	// FlagDoneBeforeAnswer: the model chose DONE (allow_complete) at a
	// stage before any answer was handed in, in an agent whose stages owe
	// one: the run ended without it (lint's allow-complete-skips-output).
	FlagDoneBeforeAnswer = "done_before_answer"
)

// Run runs one prompt turn to its end and returns how it ended. The final
// answer, when there is one, is emitted once, last, from here. Turns may
// run at once, each with its own Turn.
func (e *Engine) Run(ctx context.Context, t *Turn, sink Sink) *Result {
	llm.ReadyImages(t.Images) // encoded and uploaded once for all the turn's calls
	res := e.newRun(t, guard(t.Agent, sink), nil).run(ctx)
	// Their uploads are deleted once the turn is over and answered, with
	// the record (Recorded): a delete is a round trip to the provider that
	// the prompt's response need not wait for.
	if len(t.Images) > 0 {
		images, log := t.Images, e.log()
		res.release = func() { llm.ReleaseImages(ctx, images, log) }
	}
	return res
}

// run runs r to its end: the turn's own run, or a worker or child. The
// turn's own returns once its answer is sent and its record's last file
// queued, not written: the record is finished in the background
// (Result.Recorded). A worker or child waits for the record written so
// far, its own with its parent's, before it ends: what a fan-out of many
// keeps queued follows max_workers, not its tasks, and its report says
// whether its record was written.
func (r *run) run(ctx context.Context) *Result {
	ctx, span := r.traceRun(ctx)
	err := r.walk(ctx)
	r.endChildren(ctx)
	sub := r.sub.depth > 0
	if sub {
		r.rec.Flush()
	}
	res := r.finish(ctx, err)
	res.Workers, res.Children = r.sub.workers, append(r.resumedChildren, r.childRecords()...)
	res.Usage = r.spent.total()
	if !sub && r.t.ClientGone != nil {
		res.gone, res.ClientGone = r.t.ClientGone, r.t.ClientGone()
	}
	res.head = finishRecord(r.rec, res)
	res.rec = r.rec
	r.tracedRun(span, res)
	if sub {
		res.Recorded()
	}
	return res
}

// Recorded waits until the run's record is written whole, its run.json as
// the run ended, and the images the turn uploaded are deleted. Run returns
// without waiting for either: only the answer's own durability is on the
// answer's path (DESIGN §18: the session's file, which acp appends to
// before it answers), and a record costs a few files. A record that could
// not be written, when the answer did not say so yet, is then one more
// warning of res and of its answer. The caller calls it before it exits,
// and `coda run`, whose answer is the record, before it prints.
func (res *Result) Recorded() {
	if release := res.release; release != nil {
		res.release = nil
		release()
	}
	if res.rec == nil {
		return
	}
	if res.gone != nil && !res.ClientGone && res.gone() {
		// The client went away while the answer was being sent.
		res.ClientGone, res.head.ClientGone = true, true
		res.rec.Amend(res.head)
	}
	res.rec.Flush()
	if w := res.rec.Warning(); w != "" && !slices.Contains(res.Warnings, w) {
		res.Warnings = append(res.Warnings, w)
		if res.Answer != nil {
			res.Answer.Warnings = append(res.Answer.Warnings, w)
		}
	}
}

// run is the state of one Run.
type run struct {
	e     *Engine
	t     *Turn
	sink  Sink
	log   *slog.Logger
	rec   *store.Run
	share *tree // what the run shares with its workers and children

	plan     []PlanEntry
	visits   map[string]int
	done     []stageOutcome // completed stage visits, in order
	answer   *store.Answer
	flags    []string
	warnings []string
	written  []string
	// overwritten are files the run's tools replaced (they existed before).
	overwritten []string
	reply       string      // the last model text
	stop        string      // a stop reason other than end_turn, set by a visit
	taint       *taint.Gate // nil when the gate is off
	// sub is the run's place among workers and children (subrun.go).
	sub delegation
	// resumedChildren are the children of the run before it was resumed
	// (resume.go), as run.json lists them; hash is the blueprint's
	// (BlueprintHash), once a checkpoint needs it.
	resumedChildren []store.SubRun
	hash            string

	ending // how a run without an answer ends (noanswer.go, unavailable.go)
	kept   // artifact copies in the run record (keep.go)
	// transcript is the first visit's conversation, for the session
	// (transcript.go); transcriptOpen says it lost an unanswered call.
	transcript     []llm.Message
	transcriptOpen bool
	historyCut     int // earlier turns compaction cut (Result.HistoryCut)

	// spent is its calls' tokens and cost, its sub-runs' included
	// (usage.go).
	spent *spend
}

// stageOutcome is what a finished stage visit leaves for later stages.
type stageOutcome struct {
	stage    string
	response string
	answer   string
	reports  []string // the visit's fan_out reports
	// dir is the visit's record as a run: path ("stages/002-review@1");
	// "" when no record is kept. artifacts are its answer's files.
	dir       string
	artifacts []outputspec.Artifact
	// How the visit ended (outcome.go), its model, its calls and their
	// tokens: the preamble's line of it.
	ended, next, model string
	calls              int
	usage              llm.Usage
	// format and data are its answer's format and decoded value
	// (store.Answer.Data), masked.
	format string
	data   string
	// files are the files its tools touched, as shown (touched.go).
	files []string
}

// newRun sets up a run of t: the turn's own (parent nil), or a worker or
// child of parent, which shares its tree, its record's writer and its
// taint gate (subrun.go).
func (e *Engine) newRun(t *Turn, sink Sink, parent *run) *run {
	r := &run{e: e, t: t, sink: sink, log: e.log().With("run", t.RunID), visits: map[string]int{}, spent: newSpend(parent)}
	if t.Outputs != nil {
		r.warnings = append(r.warnings, t.Outputs.Warnings...)
	}
	r.warnings = append(r.warnings, t.Warnings...)
	if parent != nil {
		r.share, r.taint = parent.share, parent.taint
		r.rec = subRecord(parent, r) // one writer for the turn's whole record, in order
		return r
	}
	r.share = newTree(e, t, sink)
	r.share.secrets = newSecrets(r) // before the record, whose prompt it masks
	r.rec = newRecord(r)
	if rs := t.Resume; rs != nil && rs.Checkpoint != nil {
		t.Tainted = rs.Checkpoint.Tainted // what the gate knew when the run stopped
	}
	r.taint = newTaint(r)
	return r
}

// errMaxCalls ends a run that used its model-call budget.
var errMaxCalls = errors.New("the run used its model-call budget")

// A tree is what a run shares with its workers and children, and theirs
// (DESIGN §12): one model-call budget, the turn's sink and its workspace
// (so its permission memory), its tools and what it learns of its models'
// tool calling. Cancellation reaches them through their contexts, derived
// from the run's; their records nest in the run's.
type tree struct {
	calls atomic.Int64 // model calls so far, tree-wide
	max   int64
	sink  Sink
	ws    Workspace
	// perm lets one permission request of a worker or child out at a
	// time, so that "allow always" answered once covers those queued.
	perm chan struct{}
	// tools are the engine's and the session's, by name.
	tools   map[string]Tool
	support *ToolSupport
	// windows are the context windows the providers reported (compact.go).
	windows windows
	// secrets masks what the turn read of private files in what later
	// stages and the record keep (taint.go's mask).
	secrets *taint.Secrets

	agentsMu sync.Mutex
	agents   map[agentRef]*blueprint.Blueprint // the spawnable agents loaded so far (subrun_spawn.go)

	// project is the turn's AGENTS.md as the stages are given it, read
	// once (instructions.go).
	projectOnce sync.Once
	project     string
}

func newTree(e *Engine, t *Turn, sink Sink) *tree {
	tr := &tree{max: int64(e.maxModelCalls()), sink: sink, ws: t.Workspace, perm: make(chan struct{}, 1), tools: e.Tools, support: t.ToolSupport}
	if len(t.Tools) > 0 {
		tr.tools = maps.Clone(e.Tools)
		if tr.tools == nil {
			tr.tools = map[string]Tool{}
		}
		maps.Copy(tr.tools, t.Tools)
	}
	if tr.support == nil {
		tr.support = NewToolSupport()
	}
	return tr
}

// spend takes one model call from the budget, reporting false when none
// is left.
func (t *tree) spend() bool { return t.calls.Add(1) <= t.max }

// walk enters the start stage and follows transitions until a stage ends
// the run.
func (r *run) walk(ctx context.Context) error {
	stage := r.t.Agent.StartStage()
	if r.t.Resume != nil && r.sub.depth == 0 {
		stage = r.resume()
	}
	for stage != nil {
		next, err := r.visit(ctx, stage)
		if err != nil {
			return err
		}
		if next == "" {
			return nil
		}
		stage = r.t.Agent.Stages[next]
	}
	return nil
}

func (r *run) finish(ctx context.Context, err error) *Result {
	// The last reply is the session's memory of a run without an answer:
	// masked, as every text kept for later is.
	res := &Result{RunID: r.t.RunID, StopReason: "end_turn", LastReply: r.mask(r.reply), Written: r.written, Tainted: r.taint.Session(), secrets: r.share.secrets}
	res.transcript, res.transcriptOpen, res.visits, res.HistoryCut = r.transcript, r.transcriptOpen, len(r.done), r.historyCut
	if g := r.taint; g.Carries(r.reply) != "" && !g.Allows() {
		// A reply the gate would refuse is never kept as the exchange's
		// answer, to be sent to the model next turn.
		res.LastReply = ""
	}
	switch {
	case errors.Is(err, context.Canceled) || (err != nil && ctx.Err() != nil):
		res.Status, res.StopReason = StatusCancelled, "cancelled"
	case errors.Is(err, errMaxCalls):
		res.StopReason = "max_turn_requests"
		r.warn(fmt.Sprintf("the run stopped after %d model calls (the run-wide cap)", r.e.maxModelCalls()))
	case err != nil:
		res.Status, res.Err = StatusFailed, err
	}
	if r.stop != "" && res.Status == "" {
		res.StopReason = r.stop
	}
	if res.Status == "" && r.unavailable != "" {
		res.Status, res.Unavailable = StatusUnavailable, r.unavailable
	}
	if res.Status == "" {
		switch {
		case r.answer != nil:
			res.Status = StatusAnswered
		case len(r.written) > 0:
			res.Status = StatusComplete
		default:
			res.Status = StatusCompleteNoOutput
		}
	}
	if w := r.rec.Warning(); w != "" {
		r.warn(w) // once per run, however many files failed
	}
	if w := r.t.Private.Untold(); w != "" && r.sub.depth == 0 {
		r.warn(w) // once per session
	}
	res.Flags, res.Warnings = nonNil(r.flags), nonNil(r.warnings)
	res.Taint = taintCounts(r.taint)
	if r.answer != nil && res.Status != StatusUnavailable {
		a := *r.answer
		a.RunID, a.Status = r.t.RunID, res.Status
		a.Flags = nonNil(append(append([]string(nil), a.Flags...), missing(a.Flags, r.flags)...))
		a.Warnings = nonNil(append(append([]string(nil), a.Warnings...), missing(a.Warnings, r.warnings)...))
		res.Answer = &a
		// The closing answer goes out even when the run was cancelled or
		// failed after recording it; a cancelled context must not stop it.
		if err := r.sink.Emit(context.WithoutCancel(ctx), Event{Kind: EventFinalAnswer, Stage: a.Stage, MessageID: r.e.NewID("m"), Answer: &a}); err != nil {
			r.log.Warn("sending the final answer", "err", err)
		}
	}
	if res.Answer == nil {
		r.closeWithoutAnswer(ctx, res)
	}
	return res
}

func (r *run) flag(f string) {
	if !slices.Contains(r.flags, f) {
		r.flags = append(r.flags, f)
	}
}

func (r *run) warn(w string) {
	if slices.Contains(r.warnings, w) {
		return // each warning once, however often its cause recurs
	}
	r.log.Warn(w, LogWarning, true)
	r.warnings = append(r.warnings, w)
	// Shown as it arises; a warning must go out whatever ended the run.
	_ = r.sink.Emit(context.Background(), Event{Kind: EventWarning, Text: w})
}

// LogWarning marks the log record of a run's warning (one of its
// Result.Warnings), so that a front end that shows the warnings itself,
// as `coda run` does, can leave the record out: each warning once.
const LogWarning = "warning"

// emitPlan sends the plan: the stages entered so far with their statuses.
func (r *run) emitPlan(ctx context.Context, stage, status string) error {
	r.setPlan(stage, status)
	return r.sink.Emit(ctx, Event{Kind: EventPlan, Stage: stage, Plan: r.planCopy()})
}

// planCopy is the plan as an event carries it: entries and their files
// copied, for the sink may keep them while the run goes on.
func (r *run) planCopy() []PlanEntry {
	plan := append([]PlanEntry(nil), r.plan...)
	for i := range plan {
		// The names of files written, masked in a tainted run as the calls
		// that wrote them are (maskNames).
		plan[i].Files = maskFiles(plan[i].Files, r.taint.Mask)
	}
	return plan
}

// setPlan gives the plan's entry content its status, adding it when it is
// new.
func (r *run) setPlan(content, status string) {
	found := false
	for i := range r.plan {
		if r.plan[i].Content == content {
			r.plan[i].Status, found = status, true
		}
	}
	if !found {
		r.plan = append(r.plan, PlanEntry{Content: content, Status: status})
	}
}

// randomID returns prefix-XXXXXXXXXXXX, random.
func randomID(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return prefix + "-" + hex.EncodeToString(b[:])
}

// newRunID returns a sortable, unique run id.
func newRunID() string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// missing returns the items of add not already in have.
func missing(have, add []string) []string {
	var out []string
	for _, a := range add {
		if !slices.Contains(have, a) {
			out = append(out, a)
		}
	}
	return out
}
