package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/coda-acp/coda/engine/blueprint"
	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/internal/textcut"
	"github.com/coda-acp/coda/store"
)

// fan_out is the engine's tool for handing slices of work to workers
// (DESIGN §12). A stage with a [stages.X.fan_out] table offers it; each
// task runs as a worker, a sub-run (subrun.go) entering the worker stage
// alone with the task's prompt and ending when that stage ends, checked
// against the blueprint's own contract for it. Workers run at once, up to
// max_workers; the call's result is one report of what each submitted, in
// task order, each section cut at report_bytes.

// maxTasks caps the tasks of one fan_out call.
const maxTasks = 64

// workerOwed is a require_output worker's failure without an answer.
const workerOwed = "worker finished without the final output its stage requires"

// fanOutSpec is fan_out as the model is told of it.
func (v *stageVisit) fanOutSpec() llm.ToolSpec {
	fo := v.stage.FanOut
	ws := v.run.t.Agent.Stages[fo.Worker]
	var d strings.Builder
	fmt.Fprintf(&d, "Hand slices of the work to workers that run at the same time, and get back one report of what each one submitted. "+
		"Each task becomes a worker that runs the stage %s", fo.Worker)
	if ws != nil && ws.Description != "" {
		fmt.Fprintf(&d, " (%s)", strings.TrimSpace(ws.Description))
	}
	d.WriteString(" with the task's prompt as its whole instruction: a worker sees nothing of this conversation, so each prompt must say everything that worker needs (which file or question, what to find, how to answer).")
	if ws != nil {
		if c := v.run.contract(ws); c != nil {
			fmt.Fprintf(&d, " Each worker submits its answer as %s.", c.Format())
		}
	}
	fmt.Fprintf(&d, " Give 1 to %d tasks; up to %d workers run at once. Give each task a short id (a file name, a question's key) to find it in the report; "+
		"ids default to w1, w2, …. The report lists every worker in task order, as \"## worker wN (ID)\" followed by its answer, or \"## worker wN FAILED (ID)\" followed by why. "+
		"A long answer is cut in the report; the report names where its whole text can be read.", maxTasks, fo.AtOnce())
	schema := fmt.Sprintf(`{"type":"object","properties":{"tasks":{"type":"array","minItems":1,"maxItems":%d,"items":{"type":"object","properties":{`+
		`"id":{"type":"string","description":"A short, unique name for the task, shown in the report."},`+
		`"prompt":{"type":"string","description":"Everything the worker needs to do its slice."}},"required":["prompt"]}}},"required":["tasks"]}`, maxTasks)
	return llm.ToolSpec{Name: blueprint.ToolFanOut, Description: d.String(), Schema: json.RawMessage(schema)}
}

// A fanOutTask is one task of a fan_out call.
type fanOutTask struct {
	ID     string `json:"id"`
	Prompt string `json:"prompt"`
}

// subRunName matches the names of workers and children, which task ids
// may not take unless the name is their own: the script model's `for`
// must not find two callers.
var subRunName = regexp.MustCompile(`^[wc][0-9]+$`)

// parseTasks reads fan_out's arguments. Workers are named on from the
// run's earlier ones: after w3, the first task is w4. It returns why the
// call is refused, for the model, or "".
func parseTasks(args json.RawMessage, earlier int) ([]fanOutTask, string) {
	var a struct {
		Tasks []fanOutTask `json:"tasks"`
	}
	if err := json.Unmarshal(args, &a); err != nil {
		return nil, fmt.Sprintf(`fan_out takes {"tasks": [{"id": "...", "prompt": "..."}, ...]}: %v`, err)
	}
	switch n := len(a.Tasks); {
	case n == 0:
		return nil, "fan_out needs at least one task in tasks."
	case n > maxTasks:
		return nil, fmt.Sprintf("fan_out takes at most %d tasks; this call has %d. Split them over several fan_out calls.", maxTasks, n)
	}
	seen := map[string]int{}
	for i := range a.Tasks {
		t := &a.Tasks[i]
		t.ID = strings.TrimSpace(t.ID)
		name := fmt.Sprintf("w%d", earlier+i+1)
		if strings.TrimSpace(t.Prompt) == "" {
			return nil, fmt.Sprintf("Task %d has no prompt: give each task the instruction its worker follows.", i+1)
		}
		if t.ID == "" {
			continue
		}
		if j, dup := seen[t.ID]; dup {
			return nil, fmt.Sprintf("Tasks %d and %d have the same id %q: give each task its own id.", j+1, i+1, t.ID)
		}
		seen[t.ID] = i
		if subRunName.MatchString(t.ID) && t.ID != name {
			return nil, fmt.Sprintf("Task %d's id %q is another worker's name (this task's worker is %s): choose an id such as the file or question it is about.", i+1, t.ID, name)
		}
	}
	return a.Tasks, ""
}

// A worker is one task's sub-run and what came of it.
type worker struct {
	name  string
	task  fanOutTask
	label string
	sub   *run
	res   *Result // nil until it ends; for good when it never started

	content string // the answer, or the fallback: its last message's text
	failed  string // why it counts as failed; "" when it succeeded
	section string // its part of the report, once it ended (done)
}

// maxKeptReply caps what the record keeps of a model's text (clipReply):
// of a visit's response, and of a worker's reply taken as its answer (a
// worker without a submission falls back to its last message's text); a
// submission is checked against its contract, a reply is not.
const maxKeptReply = 1 << 20

// done keeps of an ended worker only what the report and the record need:
// its section of the report, cut at budget; a clip of its answer in the
// record; its status and the files it wrote. Its whole reply, its run and
// its result's texts are let go, so memory follows max_workers and
// report_bytes, not tasks × reply size.
func (w *worker) done(r *run, budget int) {
	if w.content != "" {
		keep := w.content
		if w.res != nil && w.res.Answer == nil {
			keep = clipReply(keep)
		}
		r.keepAnswer(w.sub, keep)
	}
	w.section = reportSection(w, budget, r.rec.Dir() != "")
	w.content, w.sub = "", nil
	if w.res != nil {
		res := *w.res
		res.LastReply, res.Answer = "", nil
		w.res = &res
	}
}

// settle decides what the worker's result counts as. notRun says why a
// worker that never started did not.
func (w *worker) settle(stage *blueprint.Stage, notRun string) {
	res := w.res
	switch {
	case res == nil:
		w.failed = "not run: " + notRun
	case res.Answer != nil:
		w.content = res.Answer.Content
	case res.Status == StatusCancelled:
		w.failed = "cancelled before it finished"
	case res.Err != nil:
		w.failed = "worker failed: " + res.Err.Error()
	case res.Status == StatusUnavailable:
		// An honest "cannot": its reason, not a missing answer.
		w.failed = "the worker declared its answer unavailable: " + res.Unavailable
	case stage.OwesOutput():
		w.failed = workerOwed
		if res.StopReason == "max_turn_requests" {
			w.failed += " (the run's model-call budget ran out)"
		}
	default:
		w.content = res.LastReply
	}
}

func (w *worker) record() store.SubRun {
	s := store.SubRun{Name: w.name, Task: w.label, Status: "not run", Flags: []string{}}
	if w.res != nil {
		s.Status, s.Flags = w.res.Status, nonNil(w.res.Flags)
	}
	return s
}

// fanOut runs a fan_out call. It returns the report as the call's result;
// and, when a worker failed under on_worker_failure = "fail", the error
// that ends the run. It returns only when every worker it started has
// stopped.
func (v *stageVisit) fanOut(ctx context.Context, tc llm.ToolCall, ev *ToolCallEvent) (ToolResult, error) {
	r, fo := v.run, v.stage.FanOut
	tasks, bad := parseTasks(tc.Arguments, len(r.sub.workers))
	if bad != "" {
		return Errorf("%s", bad), nil
	}
	if r.sub.depth >= MaxDepth {
		return Errorf("fan_out cannot start workers here: runs started by other runs nest at most %d deep, and this one is that deep. Do the work yourself.", MaxDepth), nil
	}
	stage := r.t.Agent.Stages[fo.Worker]
	if stage == nil || !stage.AllowAsWorker {
		return Errorf("fan_out cannot run: its worker stage %q is missing or does not say allow_as_worker = true (`coda validate` reports this). Do the work yourself.", fo.Worker), nil
	}
	agent := workerView(r.t.Agent, fo.Worker)
	workers := make([]*worker, len(tasks))
	for i, t := range tasks {
		workers[i] = &worker{name: fmt.Sprintf("w%d", len(r.sub.workers)+i+1), task: t, label: taskLabel(t.ID, t.Prompt)}
	}

	fanCtx, stopAll := context.WithCancel(ctx)
	defer stopAll()
	type ended struct {
		w   *worker
		res *Result
	}
	done := make(chan ended)
	next, running, finished, failed := 0, 0, 0, 0
	failFast := fo.OnWorkerFailure == blueprint.OnWorkerFailureFail
	start := func() {
		for next < len(workers) && running < fo.AtOnce() && fanCtx.Err() == nil && !(failFast && failed > 0) {
			w := workers[next]
			w.sub = r.newSub(subSpec{kind: "workers", name: w.name, task: w.task.ID, agent: agent, outputs: r.t.Outputs, prompt: w.task.Prompt})
			go func() { done <- ended{w, w.sub.run(fanCtx)} }()
			next++
			running++
		}
	}
	start()
	var emitErr error
	emit := func(ev Event) {
		if emitErr == nil && fanCtx.Err() == nil {
			if emitErr = r.sink.Emit(ctx, ev); emitErr != nil {
				stopAll() // the client is gone: nobody to report to
			}
		}
	}
	emit(r.workerPlan(workers, next))
	for running > 0 {
		e := <-done
		w := e.w
		w.res = e.res
		running--
		finished++
		w.settle(stage, "")
		if w.failed != "" {
			failed++
		}
		w.done(r, fo.SectionBytes())
		start()
		progress := fmt.Sprintf("%d of %d workers done", finished, len(workers))
		if failed > 0 {
			progress += fmt.Sprintf(" (%d failed)", failed)
		}
		emit(Event{Kind: EventToolCallUpdate, Stage: v.stage.Name, ToolCall: &ToolCallEvent{ID: ev.ID, Status: ToolInProgress, Content: []ToolContent{{Text: progress}}},
			Worker: &WorkerEnd{Name: w.name, Task: w.label, Failed: w.failed}})
		emit(r.workerPlan(workers, next))
	}

	notRun := "the fan-out was stopped"
	if failFast && failed > 0 {
		notRun = "an earlier worker failed, and on_worker_failure = \"fail\""
	}
	var firstFailed *worker
	for _, w := range workers {
		if w.res == nil && w.section == "" {
			w.settle(stage, notRun)
			w.done(r, fo.SectionBytes())
		}
		if w.failed != "" && firstFailed == nil {
			firstFailed = w
		}
		r.sub.workers = append(r.sub.workers, w.record())
		if w.res != nil {
			v.touched(w.res.Written) // the stage's files, as its own tools' are
		}
	}
	if emitErr != nil {
		return ToolResult{}, emitErr
	}
	report := fanOutReport(workers)
	v.reports = append(v.reports, report)
	if failFast && firstFailed != nil && ctx.Err() == nil {
		return ToolResult{Output: report, IsError: true},
			fmt.Errorf("worker %s (%s) failed: %s; the stage %s says on_worker_failure = \"fail\"", firstFailed.name, firstFailed.label, firstFailed.failed, v.stage.Name)
	}
	return ToolResult{Output: report}, nil
}

// workerView is the blueprint as a worker runs it: the worker stage is
// where it starts and ends, without its transitions or DONE.
func workerView(b *blueprint.Blueprint, stage string) *blueprint.Blueprint {
	s := *b.Stages[stage]
	s.TransitionOrder, s.AllowComplete = nil, false
	view := *b
	view.Agent.Start = stage
	view.Stages = make(map[string]*blueprint.Stage, len(b.Stages))
	for name, st := range b.Stages {
		view.Stages[name] = st
	}
	view.Stages[stage] = &s
	return &view
}

// workerPlan is the plan with one entry per worker after the stages':
// pending, in progress (the first started of them), or completed.
func (r *run) workerPlan(workers []*worker, started int) Event {
	for i, w := range workers {
		content := "worker " + w.name + ": " + w.label
		status := PlanPending
		switch {
		case w.res != nil:
			status = PlanCompleted
		case i < started:
			status = PlanInProgress
		}
		r.setPlan(content, status)
	}
	// No Stage: an update of the workers enters no stage.
	return Event{Kind: EventPlan, Plan: r.planCopy()}
}

// fanOutReport is fan_out's result: a count, then each worker's section
// (done: reportSection) in task order.
func fanOutReport(workers []*worker) string {
	failed := 0
	for _, w := range workers {
		if w.failed != "" {
			failed++
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "[fan_out results: %d succeeded, %d failed]\n", len(workers)-failed, failed)
	for _, w := range workers {
		b.WriteString(w.section)
	}
	return b.String()
}

// reportSection is a worker's section of the report, its answer cut at
// budget bytes. records says whether the whole answers are kept, so that a
// cut section can say where.
func reportSection(w *worker, budget int, records bool) string {
	if w.failed != "" {
		return fmt.Sprintf("\n## worker %s FAILED (%s)\n%s\n", w.name, w.label, w.failed)
	}
	where := ""
	if records {
		where = "run:workers/" + w.name + "/answer" // from the record of the run that called fan_out
	}
	return fmt.Sprintf("\n## worker %s (%s)\n%s\n", w.name, w.label, cutSection(strings.TrimRight(w.content, "\n"), budget, where))
}

// cutSection cuts s to budget bytes at a character boundary, saying how
// much was cut and where the whole text is ("" when it is not kept). The
// note fits within budget.
func cutSection(s string, budget int, where string) string {
	return textcut.Noted(s, budget, func(n int) string {
		if where == "" {
			return fmt.Sprintf("\n[… %d more bytes cut here]", n)
		}
		return fmt.Sprintf("\n[… %d more bytes cut here; the whole answer is at %s]", n, where)
	})
}
