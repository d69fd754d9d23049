package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/blueprint"
	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/local"
	"github.com/coda-acp/coda/engine/tools"
	"github.com/coda-acp/coda/outputspec"
	"github.com/coda-acp/coda/store"
)

// ids makes stable ids: t-1, t-2, m-1, ...
func ids() func(string) string {
	var mu sync.Mutex
	n := map[string]int{}
	return func(prefix string) string {
		mu.Lock()
		defer mu.Unlock()
		n[prefix]++
		return fmt.Sprintf("%s-%d", prefix, n[prefix])
	}
}

func builtinTools() map[string]engine.Tool { return tools.Builtin() }

// launchLevels is a launch asking for format.
func launchLevels(format string) outputspec.Levels {
	return outputspec.Levels{Launch: &outputspec.Level{Spec: outputspec.Spec{Format: format}}}
}

// fanBlueprint fans out to a JSON worker stage that must answer, then
// merges in an output stage. fanOut adds keys to [stages.plan.fan_out],
// check to the worker stage.
func fanBlueprint(fanOut, check string) string {
	return fmt.Sprintf(fanTemplate, fanOut, check)
}

const fanTemplate = `
[agent]
name = "fan"
[stages.plan]
available_tools = ["fan_out"]
[stages.plan.fan_out]
worker = "check"
report_bytes = 300
%s
[stages.plan.transitions.merge]
hint = "Every slice is back"

[stages.check]
%s
allow_as_worker = true
require_output = true
max_revisits = 0
[stages.check.output]
format = "json"
schema = { type = "object", required = ["file", "ok"] }

[stages.merge]
mode = "output"
`

// long is worker c.go's answer: longer than report_bytes.
var long = `{"file": "c.go", "ok": false, "notes": "` + strings.Repeat("é", 400) + `"}`

// threeWorkers: a.go answers, the second (no id) owes its answer and
// fails, c.go answers long and is cut. Delays set the order they finish.
var threeWorkers = `
[[turn]]
[[turn.tool_calls]]
name = "fan_out"
arguments = { tasks = [ { id = "a.go", prompt = "Check a.go" }, { prompt = "Check b.go\nand more" }, { id = "c.go", prompt = "Check c.go" } ] }

[[turn]]
for = "a.go"
expect = "Check a.go"
delay_ms = 10
text = "Checked a.go."
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = '{"file": "a.go", "ok": true}' }

[[turn]]
for = "w2"
delay_ms = 20
text = "I could not check b.go."

[[turn]]
for = "c.go"
delay_ms = 30
text = "Checked c.go."
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = '` + long + `' }

[[turn]]
expect = "[fan_out results: 2 succeeded, 1 failed]"
[[turn.tool_calls]]
name = "transition"
arguments = { to = "merge" }

[[turn]]
expect = "## worker w2 FAILED (Check b.go)"
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "a.go is fine; c.go is not; b.go was not checked." }
`

// A three-worker fan-out: the report says who answered and who failed, in
// task order, cuts the long answer pointing at its record, and the merge
// stage sees it in its preamble (its script turn's expect). The editor
// sees one fan_out call counting workers done, and a plan entry per worker.
func TestFanOut_report(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		turn := newTurn(t, fanBlueprint("", ""), threeWorkers)
		turn.IDs = ids()
		sink := &events{}
		res := runTurn(context.Background(), turn, sink)
		ended(t, res, engine.StatusAnswered, "end_turn")

		var report string
		var calls, updates []string
		var lastPlan []engine.PlanEntry
		for _, ev := range sink.evs {
			switch ev.Kind {
			case engine.EventToolCall:
				calls = append(calls, ev.ToolCall.Title)
			case engine.EventToolCallUpdate:
				if ev.ToolCall.ID != "t-1" {
					continue
				}
				for _, c := range ev.ToolCall.Content {
					if ev.ToolCall.Status == engine.ToolCompleted {
						report = c.Text
					} else {
						updates = append(updates, c.Text)
					}
				}
			case engine.EventPlan:
				lastPlan = ev.Plan
			}
		}
		if diff := cmp.Diff([]string{"fan_out: 3 tasks", "transition", "submit_output (markdown)"}, calls); diff != "" {
			t.Errorf("tool calls the editor saw (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"1 of 3 workers done", "2 of 3 workers done (1 failed)", "3 of 3 workers done (1 failed)"}, updates); diff != "" {
			t.Errorf("fan_out progress (-want +got):\n%s", diff)
		}
		wantPlan := []engine.PlanEntry{
			{Content: "plan", Status: engine.PlanCompleted},
			{Content: "worker w1: a.go", Status: engine.PlanCompleted},
			{Content: "worker w2: Check b.go", Status: engine.PlanCompleted},
			{Content: "worker w3: c.go", Status: engine.PlanCompleted},
			{Content: "merge", Status: engine.PlanCompleted},
		}
		if diff := cmp.Diff(wantPlan, lastPlan); diff != "" {
			t.Errorf("the last plan (-want +got):\n%s", diff)
		}

		cut := strings.Index(long, "é")
		head := long[:cut] + strings.Repeat("é", (300-cut-len("\n[… 7xx more bytes cut here; the whole answer is at run:workers/w3/answer]"))/2)
		want := "[fan_out results: 2 succeeded, 1 failed]\n" +
			"\n## worker w1 (a.go)\n" + `{"file": "a.go", "ok": true}` + "\n" +
			"\n## worker w2 FAILED (Check b.go)\nworker finished without the final output its stage requires\n" +
			"\n## worker w3 (c.go)\n" + head + fmt.Sprintf("\n[… %d more bytes cut here; the whole answer is at run:workers/w3/answer]", len(long)-len(head)) + "\n"
		if diff := cmp.Diff(want, report); diff != "" {
			t.Errorf("the report (-want +got):\n%s", diff)
		}
		w3 := report[max(strings.Index(report, "## worker w3"), 0):]
		if n := len(w3) - len("## worker w3 (c.go)\n") - 1; n > 300 {
			t.Errorf("w3's section is %d bytes, over report_bytes", n)
		}

		// The records: each worker's run, its whole answer, and the list.
		rr, err := turn.Store.ReadRun("run-1")
		if err != nil {
			t.Fatal(err)
		}
		wantWorkers := []store.SubRun{
			{Name: "w1", Task: "a.go", Status: engine.StatusAnswered, Flags: []string{}},
			{Name: "w2", Task: "Check b.go", Status: engine.StatusCompleteNoOutput, Flags: []string{engine.FlagOutputForced}},
			{Name: "w3", Task: "c.go", Status: engine.StatusAnswered, Flags: []string{}},
		}
		if diff := cmp.Diff(wantWorkers, rr.Workers); diff != "" {
			t.Errorf("run.json workers (-want +got):\n%s", diff)
		}
		whole, err := os.ReadFile(recordPath(turn, "workers/w3/answer"))
		if err != nil || string(whole) != long {
			t.Errorf("workers/w3/answer = %q (%v), want the whole answer", whole, err)
		}
		if _, err := os.Stat(recordPath(turn, "workers/w2/answer")); !os.IsNotExist(err) {
			t.Errorf("a failed worker has an answer file (%v)", err)
		}
		w1, err := turn.Store.ReadSubRun("run-1", "workers/w1")
		if err != nil {
			t.Fatal(err)
		}
		if w1.RunID != "run-1/workers/w1" || w1.Prompt != "Check a.go" || w1.FinalOutput == nil || w1.FinalOutput.Format != "json" {
			t.Errorf("workers/w1/run.json = %+v, want its own run answering in json", w1)
		}
		if _, err := os.Stat(recordPath(turn, "workers/w1/stages/001-check@1/status.json")); err != nil {
			t.Errorf("the worker's stage record: %v", err)
		}
		if _, err := turn.Store.ReadSubRun("run-1", "workers/w9"); err == nil || !strings.Contains(err.Error(), "has no workers/w9") {
			t.Errorf("ReadSubRun of a missing worker = %v", err)
		}
		if _, err := turn.Store.ReadSubRun("run-1", "workers/../../x"); err == nil {
			t.Error("ReadSubRun read a path out of the record")
		}
	})
}

// A failed worker under on_worker_failure = "fail" ends the run failed,
// naming the first failed worker in task order, even when a later one
// failed first.
func TestFanOut_failRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		turn := newTurn(t, fanBlueprint(`on_worker_failure = "fail"`, ""), `
[[turn]]
[[turn.tool_calls]]
name = "fan_out"
arguments = { tasks = [ { id = "a", prompt = "A" }, { id = "b", prompt = "B" }, { id = "c", prompt = "C" } ] }

[[turn]]
for = "a"
delay_ms = 10
text = "Checked."
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = '{"file": "a", "ok": true}' }

[[turn]]
for = "b"
delay_ms = 30
text = "No."

[[turn]]
for = "c"
delay_ms = 20
error = "503 overloaded"
`)
		turn.IDs = ids()
		sink := &events{}
		res := runTurn(context.Background(), turn, sink)
		if res.Status != engine.StatusFailed || res.Err == nil {
			t.Fatalf("Run = %s (%v), want failed", res.Status, res.Err)
		}
		if msg := res.Err.Error(); !strings.Contains(msg, "worker w2 (b) failed: worker finished without the final output its stage requires") || !strings.Contains(msg, `on_worker_failure = "fail"`) {
			t.Errorf("the run's error = %q, want it to name w2, the first failed in task order", msg)
		}
		if _, last := toolCalls(sink.evs); last["t-1"] == nil || last["t-1"].Status != engine.ToolFailed {
			t.Errorf("the fan_out call's last update = %+v, want failed", last["t-1"])
		}
		rr, _ := turn.Store.ReadRun("run-1")
		if rr == nil || len(rr.Workers) != 3 || rr.Workers[2].Status != engine.StatusFailed {
			t.Errorf("run.json workers = %+v", rr)
		}
	})
}

// Once a worker failed under "fail", no further worker starts.
func TestFanOut_failStopsStarting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		turn := newTurn(t, fanBlueprint("on_worker_failure = \"fail\"\nmax_workers = 1", ""), `
[[turn]]
[[turn.tool_calls]]
name = "fan_out"
arguments = { tasks = [ { prompt = "A" }, { prompt = "B" } ] }

[[turn]]
for = "w1"
text = "No."
`)
		res := runTurn(context.Background(), turn, &events{})
		if res.Status != engine.StatusFailed || !strings.Contains(res.Err.Error(), "worker w1 (A) failed") {
			t.Fatalf("Run = %s (%v)", res.Status, res.Err)
		}
		want := []store.SubRun{
			{Name: "w1", Task: "A", Status: engine.StatusCompleteNoOutput, Flags: []string{engine.FlagOutputForced}},
			{Name: "w2", Task: "B", Status: "not run", Flags: []string{}},
		}
		if diff := cmp.Diff(want, res.Workers); diff != "" {
			t.Errorf("workers (-want +got):\n%s", diff)
		}
	})
}

// A cancel mid-fan-out stops every worker at once (on the bubble's clock:
// no time passes), and the run ends cancelled, each worker's record too.
func TestFanOut_cancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var script strings.Builder
		script.WriteString("[[turn]]\n[[turn.tool_calls]]\nname = \"fan_out\"\narguments = { tasks = [")
		for i := 1; i <= 16; i++ {
			fmt.Fprintf(&script, "{ prompt = \"task %d\" },", i)
		}
		script.WriteString("] }\n")
		for i := 1; i <= 16; i++ {
			fmt.Fprintf(&script, "[[turn]]\nfor = \"w%d\"\ndelay_ms = 60000\ntext = \"never\"\n", i)
		}
		turn := newTurn(t, fanBlueprint("max_workers = 16", ""), script.String())
		ctx, cancel := context.WithCancel(context.Background())
		var cancelled time.Time
		sink := &events{on: func(ev engine.Event) {
			if ev.Kind == engine.EventPlan && len(ev.Plan) == 17 && cancelled.IsZero() {
				go func() {
					synctest.Wait() // every worker is in its model call
					cancelled = time.Now()
					cancel()
				}()
			}
		}}
		res := runTurn(ctx, turn, sink)
		if took := time.Since(cancelled); took >= 100*time.Millisecond {
			t.Errorf("the run ended %v after the cancel, want under 100ms", took)
		}
		if res.Status != engine.StatusCancelled || res.StopReason != "cancelled" {
			t.Fatalf("Run = %s/%s (%v), want cancelled", res.Status, res.StopReason, res.Err)
		}
		if len(res.Workers) != 16 {
			t.Fatalf("%d workers recorded, want 16", len(res.Workers))
		}
		for _, w := range res.Workers {
			if w.Status != engine.StatusCancelled {
				t.Errorf("worker %s ended %q, want cancelled", w.Name, w.Status)
			}
		}
		for _, ev := range sink.evs {
			if ev.Kind == engine.EventToolCallUpdate && strings.Contains(fmt.Sprint(ev.ToolCall.Content), "workers done") {
				t.Errorf("progress reported after the cancel: %+v", ev.ToolCall.Content)
			}
		}
	})
}

// Sixteen workers at once, each reading a file and answering, under the
// race detector: one budget, one sink, one workspace.
func TestFanOut_sixteen(t *testing.T) {
	var script strings.Builder
	script.WriteString("[[turn]]\n[[turn.tool_calls]]\nname = \"fan_out\"\narguments = { tasks = [")
	for i := 1; i <= 16; i++ {
		fmt.Fprintf(&script, "{ id = \"f%d.txt\", prompt = \"Read f%d.txt\" },", i, i)
	}
	script.WriteString("] }\n")
	for i := 1; i <= 16; i++ {
		fmt.Fprintf(&script, `
[[turn]]
for = "f%d.txt"
[[turn.tool_calls]]
name = "read_file"
arguments = { path = "f%d.txt" }
[[turn]]
for = "f%d.txt"
expect = "content %d"
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = '{"file": "f%d.txt", "ok": true}' }
`, i, i, i, i, i)
	}
	script.WriteString("[[turn]]\nexpect = \"[fan_out results: 16 succeeded, 0 failed]\"\n")
	bp := fanBlueprint("max_workers = 16", `available_tools = ["read_file"]`)
	bp = strings.Replace(bp, "[stages.plan.transitions.merge]\nhint = \"Every slice is back\"\n", "", 1)
	turn := newTurn(t, bp, script.String())
	turn.Engine.Tools = builtinTools()
	for i := 1; i <= 16; i++ {
		os.WriteFile(filepath.Join(turn.Workspace.Cwd(), fmt.Sprintf("f%d.txt", i)), []byte(fmt.Sprintf("content %d\n", i)), 0o644)
	}
	res := runTurn(context.Background(), turn, &events{})
	if res.Err != nil || len(res.Workers) != 16 {
		t.Fatalf("Run = %s (%v), %d workers", res.Status, res.Err, len(res.Workers))
	}
	for _, w := range res.Workers {
		if w.Status != engine.StatusAnswered {
			t.Errorf("worker %s: %s", w.Name, w.Status)
		}
	}
}

// Workers take their model calls from the run's budget: with room for the
// fan_out call and two more, the third worker finds none and fails, and so
// does the run's next call.
func TestFanOut_sharedBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		turn := newTurn(t, fanBlueprint("max_workers = 1", ""), `
[[turn]]
[[turn.tool_calls]]
name = "fan_out"
arguments = { tasks = [ { prompt = "A" }, { prompt = "B" }, { prompt = "C" } ] }
[[turn]]
for = "w1"
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = '{"file": "a", "ok": true}' }
[[turn]]
for = "w2"
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = '{"file": "b", "ok": true}' }
`)
		turn.MaxModelCalls = 3
		res := runTurn(context.Background(), turn, &events{})
		if res.StopReason != "max_turn_requests" {
			t.Errorf("the run stopped %q, want max_turn_requests", res.StopReason)
		}
		if len(res.Workers) != 3 || res.Workers[2].Status != engine.StatusCompleteNoOutput {
			t.Errorf("workers = %+v, want the third without an answer", res.Workers)
		}
	})
}

// A worker's tool calls that change files reach the editor named after the
// worker, and so does its permission request; its reads and its text stay
// in its record.
func TestFanOut_workerEditsShown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bp := fanBlueprint("", `available_tools = ["write_file", "read_file"]`)
		turn := newTurn(t, bp, `
[[turn]]
[[turn.tool_calls]]
name = "fan_out"
arguments = { tasks = [ { prompt = "Write it" } ] }
[[turn]]
for = "w1"
text = "Reading first."
[[turn.tool_calls]]
name = "read_file"
arguments = { path = "missing.txt" }
[[turn]]
for = "w1"
[[turn.tool_calls]]
name = "write_file"
arguments = { path = "out.txt", content = "hello" }
[[turn]]
for = "w1"
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = '{"file": "out.txt", "ok": true}' }
[[turn]]
expect = "1 succeeded"
[[turn.tool_calls]]
name = "transition"
arguments = { to = "merge" }
[[turn]]
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "done" }
`)
		turn.Engine.Tools = builtinTools()
		var mu sync.Mutex
		var asked []string
		turn.Workspace.(*local.Workspace).Approve = func(_ context.Context, req engine.PermissionRequest) (bool, error) {
			mu.Lock()
			defer mu.Unlock()
			asked = append(asked, req.ToolCall.Title)
			return true, nil
		}
		sink := &events{}
		res := runTurn(context.Background(), turn, sink)
		ended(t, res, engine.StatusAnswered, "end_turn")
		var titles []string
		for _, ev := range sink.evs {
			switch ev.Kind {
			case engine.EventToolCall:
				titles = append(titles, ev.ToolCall.Title)
			case engine.EventText:
				if strings.Contains(ev.Text, "Reading first") {
					t.Errorf("the worker's text reached the editor: %q", ev.Text)
				}
			}
		}
		if diff := cmp.Diff([]string{"fan_out: 1 task", "[w1] Write out.txt", "transition", "submit_output (markdown)"}, titles); diff != "" {
			t.Errorf("tool calls the editor saw (-want +got):\n%s", diff)
		}
		if len(asked) != 1 || !strings.HasPrefix(asked[0], "[w1] ") {
			t.Errorf("permission asked for %q, want one naming the worker", asked)
		}
		if len(res.Written) != 1 || !strings.HasSuffix(res.Written[0], "out.txt") {
			t.Errorf("the run's written files = %v, want the worker's", res.Written)
		}
		// The worker's files are the fanning stage's: in its status.json,
		// and in what the next stage is told of it.
		st, err := os.ReadFile(recordPath(turn, "stages/001-plan@1/status.json"))
		if err != nil {
			t.Fatal(err)
		}
		var status struct {
			Files []string `json:"filesWritten"`
		}
		if err := json.Unmarshal(st, &status); err != nil || len(status.Files) != 1 || !strings.HasSuffix(status.Files[0], "out.txt") {
			t.Errorf("the plan stage's status.json lists %v (%v), want the worker's out.txt", status.Files, err)
		}
		prompt, err := os.ReadFile(recordPath(turn, "stages/002-merge@1/prompt.md"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(prompt), "### Stage plan\n") || !strings.Contains(string(prompt), "Files written: out.txt\n") {
			t.Errorf("the merge stage is not told of the worker's file:\n%s", prompt)
		}
	})
}

// fan_out's arguments are checked: the model is told what is wrong, and
// nothing starts.
func TestFanOut_badTasks(t *testing.T) {
	tests := []struct{ args, want string }{
		{`{ tasks = [] }`, "at least one task"},
		{`{ tasks = [ { prompt = "" } ] }`, "Task 1 has no prompt"},
		{`{ tasks = [ { id = "x", prompt = "a" }, { id = "x", prompt = "b" } ] }`, `Tasks 1 and 2 have the same id "x"`},
		{`{ tasks = [ { id = "w2", prompt = "a" }, { prompt = "b" } ] }`, `id "w2" is another worker's name`},
		{`{ tasks = "all" }`, "fan_out takes"},
		{`{ tasks = [` + strings.Repeat(`{ prompt = "p" },`, 65) + `] }`, "at most 64 tasks; this call has 65"},
	}
	for _, tt := range tests {
		turn := newTurn(t, fanBlueprint("", ""), `
[[turn]]
[[turn.tool_calls]]
name = "fan_out"
arguments = `+tt.args+`
[[turn]]
expect = "`+strings.ReplaceAll(tt.want, `"`, `\"`)+`"
text = "ok"
`)
		turn.MaxModelCalls = 2
		res := runTurn(context.Background(), turn, &events{})
		if res.Err != nil && !strings.Contains(res.Err.Error(), "no turn left") {
			t.Errorf("%s: %v", tt.args, res.Err)
		}
		if len(res.Workers) != 0 {
			t.Errorf("%s: workers started: %+v", tt.args, res.Workers)
		}
	}
}

// Workers answer to the blueprint's contract for their stage, never to the
// launch's: a launch asking for XML shapes the run's answer, not theirs,
// and retires nothing of theirs.
func TestFanOut_workerContractIgnoresLaunch(t *testing.T) {
	b, err := blueprint.Parse([]byte(fanBlueprint("", "")), "test")
	if err != nil {
		t.Fatal(err)
	}
	outs, err := blueprint.CompileOutputs(b, launchLevels("xml"))
	if err != nil {
		t.Fatal(err)
	}
	if got := outs.ByStage["check"].Format(); got != "json" {
		t.Errorf("the worker stage's format = %s, want its own json", got)
	}
	if got := outs.ByStage["merge"].Format(); got != "xml" {
		t.Errorf("the merge stage's format = %s, want the launch's xml", got)
	}
	if len(outs.Warnings) != 0 {
		t.Errorf("warnings = %q, want none (nothing of the worker's is retired)", outs.Warnings)
	}
	if got := outs.Lead(b).Format(); got != "xml" {
		t.Errorf("the lead contract is %s, want the merge stage's, not the worker's", got)
	}
}

// Workers' permission requests reach the user one at a time, so that an
// "allow always" given to one covers those waiting behind it.
func TestFanOut_permissionsOneAtATime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bp := fanBlueprint("max_workers = 4", `available_tools = ["write_file"]`)
		var script strings.Builder
		script.WriteString("[[turn]]\n[[turn.tool_calls]]\nname = \"fan_out\"\narguments = { tasks = [{ prompt = \"1\" }, { prompt = \"2\" }, { prompt = \"3\" }, { prompt = \"4\" }] }\n")
		for i := 1; i <= 4; i++ {
			fmt.Fprintf(&script, "[[turn]]\nfor = \"w%d\"\n[[turn.tool_calls]]\nname = \"write_file\"\narguments = { path = \"f%d.txt\", content = \"x\" }\n", i, i)
			fmt.Fprintf(&script, "[[turn]]\nfor = \"w%d\"\n[[turn.tool_calls]]\nname = \"submit_output\"\narguments = { content = '{\"file\": \"f%d.txt\", \"ok\": true}' }\n", i, i)
		}
		turn := newTurn(t, bp, script.String())
		turn.Engine.Tools = builtinTools()
		var mu sync.Mutex
		asking, most, asked := 0, 0, 0
		turn.Workspace.(*local.Workspace).Approve = func(ctx context.Context, _ engine.PermissionRequest) (bool, error) {
			mu.Lock()
			asking++
			asked++
			most = max(most, asking)
			mu.Unlock()
			select { // the user thinks, on the bubble's clock
			case <-time.After(time.Second):
			case <-ctx.Done():
				return false, ctx.Err()
			}
			mu.Lock()
			asking--
			mu.Unlock()
			return true, nil
		}
		res := runTurn(context.Background(), turn, &events{})
		if len(res.Workers) != 4 || res.Workers[3].Status != engine.StatusAnswered {
			t.Fatalf("workers = %+v", res.Workers)
		}
		if asked != 4 || most != 1 {
			t.Errorf("%d requests, at most %d at once; want 4, one at a time", asked, most)
		}
	})
}

// The merge stage reads a worker's whole answer, which the report cut, at
// the run: path the report names (DESIGN §12, §15).
func TestFanOut_mergeReadsWholeAnswer(t *testing.T) {
	turn := newTurn(t, `
[agent]
name = "fan"
[stages.plan]
available_tools = ["fan_out"]
[stages.plan.fan_out]
worker = "check"
report_bytes = 256
[stages.plan.transitions.merge]
hint = "Every slice is back"
[stages.check]
allow_as_worker = true
require_output = true
[stages.merge]
mode = "output"
available_tools = ["read_file"]
`, `
[[turn]]
[[turn.tool_calls]]
name = "fan_out"
arguments = { tasks = [ { id = "big", prompt = "Say a lot" } ] }

[[turn]]
for = "big"
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "`+strings.Repeat("word ", 200)+`the end" }

[[turn]]
expect = "run:workers/w1/answer"
[[turn.tool_calls]]
name = "transition"
arguments = { to = "merge" }

[[turn]]
[[turn.tool_calls]]
name = "read_file"
arguments = { path = "run:workers/w1/answer" }

[[turn]]
expect = "the end"
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "Read it all." }
`)
	turn.Engine.Tools = builtinTools()
	res := runTurn(context.Background(), turn, &events{})
	ended(t, res, engine.StatusAnswered, "end_turn")
}

// DESIGN §12's own example lists submit_output among the worker stage's
// tools: the worker is offered it once, from its contract, and nothing
// warns of a tool coda does not have.
func TestFanOut_designExampleListsSubmitOutput(t *testing.T) {
	data, err := os.ReadFile("../testdata/blueprints/design-fan-out.toml")
	if err != nil {
		t.Fatal(err)
	}
	turn, sp := scripted(t, string(data), `
[[turn]]
[[turn.tool_calls]]
name = "fan_out"
arguments = { tasks = [ { id = "a.go", prompt = "Fix a.go" } ] }

[[turn]]
for = "a.go"
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = '{"file": "a.go", "fixed": true}' }

[[turn]]
expect = "[fan_out results: 1 succeeded, 0 failed]"
[[turn.tool_calls]]
name = "transition"
arguments = { to = "merge" }

[[turn]]
text = "a.go is fixed."
`)
	turn.Engine.Tools = builtinTools()
	res := runTurn(context.Background(), turn, &events{})
	ended(t, res, engine.StatusAnswered, "end_turn")
	if len(res.Warnings) != 0 {
		t.Errorf("warnings %q", res.Warnings)
	}
	var worker *llm.Request
	for _, req := range sp.reqs {
		if req.Caller.Task == "a.go" {
			worker = req
		}
	}
	if worker == nil {
		t.Fatal("the worker made no model call")
	}
	n := 0
	for _, tool := range worker.Tools {
		if tool.Name == blueprint.ToolSubmitOutput {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the worker is offered submit_output %d times, want once", n)
	}
	w1, err := turn.Store.ReadSubRun(turn.RunID, "workers/w1")
	if err != nil || w1.Status != engine.StatusAnswered || len(w1.Warnings) != 0 {
		t.Errorf("worker w1's record %+v (%v): want answered, no warnings", w1, err)
	}
}

// A worker that declares its answer unavailable is reported with its
// reason, not as one that never answered, and counts as failed.
func TestFanOut_workerUnavailable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		turn, _ := scripted(t, fanBlueprint("", ""), `
[[turn]]
[[turn.tool_calls]]
name = "fan_out"
arguments = { tasks = [ { id = "a.go", prompt = "Check a.go" } ] }

[[turn]]
for = "a.go"
[[turn.tool_calls]]
name = "submit_output"
arguments = { unavailable = "a.go does not exist." }

[[turn]]
expect = "## worker w1 FAILED (a.go)\nthe worker declared its answer unavailable: a.go does not exist."
[[turn.tool_calls]]
name = "transition"
arguments = { to = "merge" }

[[turn]]
text = "Nothing to check."
`)
		res := runTurn(context.Background(), turn, &events{})
		ended(t, res, engine.StatusAnswered, "end_turn")
		if len(res.Workers) != 1 || res.Workers[0].Status != engine.StatusUnavailable {
			t.Errorf("workers %+v", res.Workers)
		}
	})
}

// gauge is a model that counts the worker calls in flight at once.
type gauge struct {
	llm.Model
	mu         sync.Mutex
	now, most  int
	workerSeen int
}

func (g *gauge) Stream(ctx context.Context, req *llm.Request, onDelta func(llm.Delta) error) (*llm.Response, error) {
	if req.Caller.Name == "" {
		return g.Model.Stream(ctx, req, onDelta)
	}
	g.mu.Lock()
	g.now++
	g.workerSeen++
	g.most = max(g.most, g.now)
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		g.now--
		g.mu.Unlock()
	}()
	return g.Model.Stream(ctx, req, onDelta)
}

// Workers run at once up to max_workers, and no more: five tasks under
// max_workers = 2 keep two in flight, never three.
func TestFanOut_maxWorkers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var script strings.Builder
		script.WriteString("[[turn]]\n[[turn.tool_calls]]\nname = \"fan_out\"\narguments = { tasks = [")
		for i := 1; i <= 5; i++ {
			fmt.Fprintf(&script, "{ prompt = \"task %d\" },", i)
		}
		script.WriteString("] }\n")
		for i := 1; i <= 5; i++ {
			fmt.Fprintf(&script, "[[turn]]\nfor = \"w%d\"\ndelay_ms = 100\ntext = \"x\"\n[[turn.tool_calls]]\nname = \"submit_output\"\narguments = { content = '{\"file\": \"%d\", \"ok\": true}' }\n", i, i)
		}
		script.WriteString("[[turn]]\nexpect = \"[fan_out results: 5 succeeded, 0 failed]\"\ntext = \"done\"\n")
		bp := strings.Replace(fanBlueprint("max_workers = 2", ""), "[stages.plan.transitions.merge]\nhint = \"Every slice is back\"\n", "", 1)
		turn := newTurn(t, bp, script.String())
		g := &gauge{Model: turn.Models.(oneModel).m}
		turn.Models = oneModel{g}
		start := time.Now()
		res := runTurn(context.Background(), turn, &events{})
		if res.Err != nil || len(res.Workers) != 5 {
			t.Fatalf("Run = %s (%v), %d workers", res.Status, res.Err, len(res.Workers))
		}
		if g.most != 2 || g.workerSeen != 5 {
			t.Errorf("at most %d workers at once over %d calls; want 2 over 5", g.most, g.workerSeen)
		}
		// Three rounds of 100 ms on the bubble's clock: 2, 2, then 1.
		if took := time.Since(start); took != 300*time.Millisecond {
			t.Errorf("the fan-out took %v, want 300ms", took)
		}
	})
}

// refusing plays a server that refuses tools for the spec "script:worker",
// as Ollama does for a model without the tools capability, counting the
// refusals; every other spec is served as it is.
type refusing struct {
	m       llm.Model
	mu      sync.Mutex
	refused int
}

func (m *refusing) Model(spec string) (llm.Model, error) {
	if spec != "script:worker" {
		return m.m, nil
	}
	return refusingModel{m}, nil
}

type refusingModel struct{ *refusing }

func (m refusingModel) Name() string { return "script:worker" }

func (m refusingModel) Stream(ctx context.Context, req *llm.Request, onDelta func(llm.Delta) error) (*llm.Response, error) {
	if len(req.Tools) > 0 {
		m.mu.Lock()
		m.refused++
		m.mu.Unlock()
		return nil, fmt.Errorf("HTTP 400: worker does not support tools: %w", llm.ErrToolsUnsupported)
	}
	return m.m.Stream(ctx, req, onDelta)
}

// A worker is called as its turn is: the session's withheld tools (a
// read-only mode) are not offered to it either; a model known to lack tool
// calling is called without tools from the start; and what one worker
// learns of a model's tool calling, the next knows.
func TestFanOut_workerInheritsTurn(t *testing.T) {
	const checkTools = `available_tools = ["read_file", "write_file"]`
	bp := fanBlueprint("max_workers = 1", checkTools+"\n"+`model = { models = ["script:worker"], allow_user_default = false }`)
	model := `
[[turn]]
[[turn.tool_calls]]
name = "fan_out"
arguments = { tasks = [ { id = "a.go", prompt = "Check a.go" }, { id = "b.go", prompt = "Check b.go" } ] }

[[turn]]
for = "a.go"
text = '{"file": "a.go", "ok": true}'

[[turn]]
for = "b.go"
text = '{"file": "b.go", "ok": true}'

[[turn]]
expect = "[fan_out results: 2 succeeded, 0 failed]"
[[turn.tool_calls]]
name = "transition"
arguments = { to = "merge" }

[[turn]]
text = "Done."
`
	// The read-only mode's withholding.
	turn, sp := scripted(t, fanBlueprint("max_workers = 1", checkTools), model)
	turn.Engine.Tools = builtinTools()
	turn.Withhold = func(t engine.Tool) bool { return t.Kind() == "edit" }
	ended(t, runTurn(context.Background(), turn, &events{}), engine.StatusAnswered, "end_turn")
	for _, req := range sp.reqs {
		for _, tool := range req.Tools {
			if req.Caller.Name != "" && tool.Name == "write_file" {
				t.Errorf("worker %s is offered write_file, which the session withholds", req.Caller.Name)
			}
		}
	}

	// What is known of the worker's model before calling it.
	turn, sp = scripted(t, bp, model)
	turn.ModelFacts = func(spec string) llm.ModelFact {
		if spec == "script:worker" {
			return llm.ModelFact{NoTools: "tools = false in the config"}
		}
		return llm.ModelFact{}
	}
	turn.Models = oneModel{sp}
	ended(t, runTurn(context.Background(), turn, &events{}), engine.StatusAnswered, "end_turn")
	for _, req := range sp.reqs {
		if req.Caller.Name != "" && len(req.Tools) > 0 {
			t.Errorf("worker %s is offered tools its model cannot call", req.Caller.Name)
		}
	}

	// What a server said of it: one refusal for both workers.
	turn, sp = scripted(t, bp, model)
	m := &refusing{m: sp}
	turn.Models = m
	res := runTurn(context.Background(), turn, &events{})
	ended(t, res, engine.StatusAnswered, "end_turn")
	if m.refused != 1 {
		t.Errorf("the server refused tools %d times, want once: the second worker should know", m.refused)
	}
}
