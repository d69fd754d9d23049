package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/coda-acp/coda/engine/blueprint"
	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/internal/textcut"
	"github.com/coda-acp/coda/store"
)

// A sub-run is a run started by another (DESIGN §12): a fan_out worker
// (subrun_fan_out.go) or a spawned child (subrun_spawn.go). It is a run of
// its own, with its own stages, answer and record under its parent's
// (workers/wN, children/cN), and shares the turn's tree: the model-call budget, the
// workspace and its permission memory, and the sink, through which only
// what changes the user's files reaches the editor. Its context derives
// from its parent's, so a cancel reaches every one.

// MaxDepth is how deep sub-runs nest: a child's child's child, and no
// further.
const MaxDepth = 3

// delegation is a run's own part in the tree: where it sits, and the
// workers and children it started.
type delegation struct {
	depth  int
	caller llm.Caller // zero for the turn's own run
	// workers are the run's fan_out workers so far, across its fan_out
	// calls, in task order: names go on from one call to the next.
	workers  []store.SubRun
	children []*child // subrun_spawn.go
}

// subSpec is what a sub-run is started with.
type subSpec struct {
	kind    string // "workers" or "children": its record's directory
	name    string // w1, c1
	task    string // a worker's task id, as fan_out was given it
	agent   *blueprint.Blueprint
	outputs *blueprint.Outputs
	prompt  string
}

// newSub makes a sub-run of r. It shares r's tree; its workspace and sink
// name it to the user.
func (r *run) newSub(s subSpec) *run {
	name := s.name
	if r.sub.caller.Name != "" {
		name = r.sub.caller.Name + "/" + s.name
	}
	label := "[" + name + "] "
	// The child's turn is its parent's, but for what it is asked: the
	// user's model, the session's tools, mode and workspace hold for every
	// run of the turn (the engine, the tree and the taint gate are shared
	// outright); the parent's conversation and prompt are not the child's.
	t := *r.t
	t.RunID = r.t.RunID + "/" + s.kind + "/" + s.name // its record nests in its parent's
	t.Agent, t.Outputs, t.Prompt = s.agent, s.outputs, s.prompt
	t.History, t.Images, t.Warnings, t.PromptSources = nil, nil, nil, nil
	t.Steer = nil                        // the user steers the turn, not its workers
	t.Resume, t.Checkpoints = nil, false // resumed with its run, from the run's checkpoint
	t.Workspace = &subWorkspace{Workspace: r.share.ws, perm: r.share.perm, label: label}
	// The taint gate is the turn's: what a worker or child reads taints the
	// whole turn (its answer reaches the parent's report), and its egress
	// tools meet the turn's policy.
	c := r.e.newRun(&t, &subSink{to: r.share.sink, label: label, shown: map[string]bool{}}, r)
	c.sub.depth = r.sub.depth + 1
	c.sub.caller = llm.Caller{Name: name, Task: s.task}
	return c
}

// keepAnswer writes a sub-run's whole answer into its record, as answer:
// what a report cuts, `run:workers/wN/answer` (or children/cN) reads
// whole.
// The parent writes it, so that a failure shows in the parent's warnings.
func (r *run) keepAnswer(sub *run, content string) { r.rec.KeepAnswer(sub.rec, r.mask(content)) }

// taskLabel is how a sub-run's task is shown: its id when it has one,
// else the first line of its prompt, shortened.
func taskLabel(id, prompt string) string {
	if id != "" {
		return id
	}
	line, _, _ := strings.Cut(strings.TrimSpace(prompt), "\n")
	const most = 60
	if len(line) <= most {
		return line
	}
	return textcut.At(line, most) + "…"
}

// guard makes sink safe for the concurrent Emits of workers and children
// when the blueprint can start any; otherwise it is left as it is.
func guard(b *blueprint.Blueprint, sink Sink) Sink {
	for _, s := range b.Stages {
		if s.FanOut != nil || len(s.Spawn) > 0 {
			return &lockedSink{to: sink}
		}
	}
	return sink
}

type lockedSink struct {
	mu sync.Mutex
	to Sink
}

func (l *lockedSink) Emit(ctx context.Context, ev Event) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.to.Emit(ctx, ev)
}

// subSink is a sub-run's sink. Its text, reasoning, plan and answer stay
// in its record: many at once would interleave in the editor, and the
// parent's tool call reports their progress. What reaches the editor are
// its tool calls that ask permission (edits, shell, MCP tools),
// titled with the sub-run's name, so that the user sees what is done to
// their files and what a permission request is about.
type subSink struct {
	to    Sink
	label string // "[w2] "

	mu    sync.Mutex
	shown map[string]bool // the tool calls passed on, by id
}

func (s *subSink) Emit(ctx context.Context, ev Event) error {
	switch ev.Kind {
	case EventToolCall, EventToolCallUpdate:
	default:
		return nil
	}
	tc := *ev.ToolCall
	s.mu.Lock()
	pass := s.shown[tc.ID]
	if ev.Kind == EventToolCall && tc.Status == ToolPending {
		pass = true
		s.shown[tc.ID] = true
	}
	if tc.Status == ToolCompleted || tc.Status == ToolFailed {
		delete(s.shown, tc.ID)
	}
	s.mu.Unlock()
	if !pass {
		return nil
	}
	if tc.Title != "" {
		tc.Title = s.label + tc.Title
	}
	ev.ToolCall = &tc
	return s.to.Emit(ctx, ev)
}

// subWorkspace is the turn's workspace as a sub-run uses it: its
// permission requests name the sub-run, and go to the user one at a time,
// so that "allow always" answered for one covers those waiting behind it.
type subWorkspace struct {
	Workspace
	perm  chan struct{}
	label string
}

func (w *subWorkspace) RequestPermission(ctx context.Context, req PermissionRequest) (bool, error) {
	select {
	case w.perm <- struct{}{}:
	case <-ctx.Done():
		return false, ctx.Err()
	}
	defer func() { <-w.perm }()
	req.ToolCall.Title = w.label + req.ToolCall.Title
	return w.Workspace.RequestPermission(ctx, req)
}

// delegationSpecs are the stage's tools for starting sub-runs.
func (v *stageVisit) delegationSpecs() []llm.ToolSpec {
	var specs []llm.ToolSpec
	if v.stage.Delegates(blueprint.ToolFanOut) {
		specs = append(specs, v.fanOutSpec())
	}
	if v.stage.Delegates(blueprint.ToolSpawnAgent) {
		specs = append(specs, v.spawnSpecs()...)
	}
	return specs
}

// delegationTitle is how the editor shows a call of one of them.
func delegationTitle(tc llm.ToolCall) string {
	var a struct {
		Tasks []json.RawMessage `json:"tasks"`
		Agent string            `json:"agent"`
		ID    string            `json:"id"`
	}
	_ = json.Unmarshal(tc.Arguments, &a)
	switch {
	case tc.Name == blueprint.ToolFanOut && len(a.Tasks) == 1:
		return "fan_out: 1 task"
	case tc.Name == blueprint.ToolFanOut && len(a.Tasks) > 1:
		return fmt.Sprintf("fan_out: %d tasks", len(a.Tasks))
	case tc.Name == blueprint.ToolSpawnAgent && a.Agent != "":
		return "spawn_agent: " + a.Agent
	case tc.Name == blueprint.ToolWaitForAgent && a.ID != "":
		return "wait_for_agent: " + a.ID
	}
	return tc.Name
}

// delegate runs a call of one of them. stop is an error that ends the run
// (a failed worker under on_worker_failure = "fail").
func (v *stageVisit) delegate(ctx context.Context, tc llm.ToolCall, ev *ToolCallEvent) (res ToolResult, stop error) {
	switch tc.Name {
	case blueprint.ToolFanOut:
		return v.fanOut(ctx, tc, ev)
	case blueprint.ToolSpawnAgent:
		return v.spawn(ctx, tc), nil
	default:
		return v.wait(ctx, tc), nil
	}
}
