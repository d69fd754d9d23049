package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/blueprint"
	"github.com/coda-acp/coda/store"
)

// agents is an AgentLoader over blueprint texts by name.
func agents(t *testing.T, texts map[string]string) blueprint.Loader {
	return func(name, _ string) (*blueprint.Blueprint, error) {
		text, ok := texts[name]
		if !ok {
			return nil, fmt.Errorf("no agent %q", name)
		}
		return blueprint.Parse([]byte(text), name)
	}
}

const spawner = `
[agent]
name = "lead"
[stages.work]
mode = "output"
spawn = ["finder"]
`

// finder answers in JSON against a schema of its own.
const finder = `
[agent]
name = "finder"
description = "Finds things"
[agent.output]
format = "json"
schema = { type = "object", required = ["found"] }
[stages.find]
mode = "output"
`

// A spawned child runs with the spawn's output_* as its launch level: asked
// for XML, its blueprint's JSON schema is retired, and the spawn's result
// says so. wait_for_agent returns its answer record; its record nests in
// the parent's.
func TestSpawn_overriddenFormat(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		turn := newTurn(t, spawner, `
[[turn]]
[[turn.tool_calls]]
name = "spawn_agent"
arguments = { agent = "finder", prompt = "Find the config.", output_format = "xml", output_instructions = "One <found> element." }

[[turn]]
expect = "Started c1 (finder)"
[[turn.tool_calls]]
name = "wait_for_agent"
arguments = { id = "c1" }

[[turn]]
for = "c1"
expect = "Find the config."
delay_ms = 50
text = "Looking."
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "<found>config.toml</found>" }

[[turn]]
expect = '"content":"<found>config.toml</found>"'
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "It is config.toml." }
`)
		turn.Agents = agents(t, map[string]string{"finder": finder})
		turn.IDs = ids()
		sink := &events{}
		res := runTurn(context.Background(), turn, sink)
		ended(t, res, engine.StatusAnswered, "end_turn")
		_, last := toolCalls(sink.evs)
		spawned, waited := resultText(last["t-1"]), resultText(last["t-2"])
		if !strings.HasPrefix(spawned, "Started c1 (finder).") || !strings.Contains(spawned, "Warnings:\n- spawn_agent's output_* arguments asks for xml where json was in effect: retired schema (from the blueprint's [agent.output])") {
			t.Errorf("spawn_agent's result = %q, want the id and the retirement", spawned)
		}
		var rec store.Answer
		if err := json.Unmarshal([]byte(waited), &rec); err != nil {
			t.Fatalf("wait_for_agent's result is not an answer record: %v\n%s", err, waited)
		}
		if rec.RunID != "run-1/children/c1" || rec.Status != engine.StatusAnswered || rec.Format != "xml" || rec.Content != "<found>config.toml</found>" || rec.Stage != "find" {
			t.Errorf("answer record = %+v", rec)
		}
		if len(rec.Warnings) == 0 || !strings.Contains(rec.Warnings[0], "retired") {
			t.Errorf("the child's warnings = %q, want the retirement", rec.Warnings)
		}
		want := []store.SubRun{{Name: "c1", Task: "Find the config.", Agent: "finder", Status: engine.StatusAnswered, Flags: []string{}}}
		if diff := cmp.Diff(want, res.Children); diff != "" {
			t.Errorf("children (-want +got):\n%s", diff)
		}
		rr, err := turn.Store.ReadRun("run-1")
		if err != nil || len(rr.Children) != 1 {
			t.Fatalf("run.json children: %+v (%v)", rr, err)
		}
		c1, err := turn.Store.ReadSubRun("run-1", "children/c1")
		if err != nil || c1.FinalOutput == nil || c1.Agent != "finder" {
			t.Errorf("children/c1/run.json = %+v (%v)", c1, err)
		}
		answer, err := os.ReadFile(recordPath(turn, "children/c1/answer"))
		if err != nil || string(answer) != "<found>config.toml</found>" {
			t.Errorf("children/c1/answer = %q (%v)", answer, err)
		}
	})
}

// At most four children run at once: the fifth spawn is refused, saying
// which are running; a child never waited for is stopped when the run
// ends, with a warning.
func TestSpawn_limits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var s strings.Builder
		s.WriteString("[[turn]]\n")
		for i := 0; i < 5; i++ {
			s.WriteString("[[turn.tool_calls]]\nname = \"spawn_agent\"\narguments = { agent = \"finder\", prompt = \"Go.\" }\n")
		}
		for i := 1; i <= 4; i++ {
			fmt.Fprintf(&s, "[[turn]]\nfor = \"c%d\"\ndelay_ms = 600000\ntext = \"slow\"\n", i)
		}
		s.WriteString(`
[[turn]]
expect = "4 agents you started are still running, the most at once (c1, c2, c3, c4): call wait_for_agent for one of them first."
[[turn.tool_calls]]
name = "spawn_agent"
arguments = { agent = "nobody", prompt = "Go." }
[[turn]]
expect = '"nobody" is not an agent this stage can start. It can start: finder.'
[[turn.tool_calls]]
name = "wait_for_agent"
arguments = { id = "c9" }
[[turn]]
expect = 'There is no agent "c9". The agents you started: c1, c2, c3, c4.'
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "Gave up." }
`)
		turn := newTurn(t, spawner, s.String())
		turn.Agents = agents(t, map[string]string{"finder": finder})
		res := runTurn(context.Background(), turn, &events{})
		ended(t, res, engine.StatusAnswered, "end_turn")
		if len(res.Children) != 4 {
			t.Fatalf("children = %+v, want 4", res.Children)
		}
		for _, c := range res.Children {
			if c.Status != engine.StatusCancelled {
				t.Errorf("child %s ended %s, want cancelled at the run's end", c.Name, c.Status)
			}
		}
		found := 0
		for _, w := range res.Warnings {
			if strings.Contains(w, "was still running when the run ended, and was stopped") {
				found++
			}
		}
		if found != 4 {
			t.Errorf("warnings = %q, want one per stopped child", res.Warnings)
		}
	})
}

// A turn loads each agent it may spawn once: spawn_agent's description
// names it, and every spawn of it starts the blueprint loaded then.
func TestSpawn_loadsEachAgentOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		turn := newTurn(t, spawner, `
[[turn]]
[[turn.tool_calls]]
name = "spawn_agent"
arguments = { agent = "finder", prompt = "One." }
[[turn.tool_calls]]
name = "spawn_agent"
arguments = { agent = "finder", prompt = "Two." }
[[turn.tool_calls]]
name = "wait_for_agent"
arguments = { id = "c1" }
[[turn.tool_calls]]
name = "wait_for_agent"
arguments = { id = "c2" }
[[turn]]
for = "c1"
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = '{"found": 1}' }
[[turn]]
for = "c2"
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = '{"found": 2}' }
[[turn]]
expect = 'run-1/children/c2'
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "Both found." }
`)
		load := agents(t, map[string]string{"finder": finder})
		loads := 0
		turn.Agents = func(name, fromDir string) (*blueprint.Blueprint, error) {
			loads++
			return load(name, fromDir)
		}
		res := runTurn(context.Background(), turn, &events{})
		if res.Status != engine.StatusAnswered || len(res.Children) != 2 {
			t.Fatalf("Run = %s (%v), children %+v", res.Status, res.Err, res.Children)
		}
		if loads != 1 {
			t.Errorf("finder was loaded %d times, want once", loads)
		}
	})
}

// Children nest three deep and no further.
func TestSpawn_depth(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		self := `
[agent]
name = "self"
[stages.go]
mode = "output"
spawn = ["self"]
`
		turn := newTurn(t, self, `
[[turn]]
[[turn.tool_calls]]
name = "spawn_agent"
arguments = { agent = "self", prompt = "Deeper." }
[[turn.tool_calls]]
name = "wait_for_agent"
arguments = { id = "c1" }
[[turn]]
for = "c1"
[[turn.tool_calls]]
name = "spawn_agent"
arguments = { agent = "self", prompt = "Deeper." }
[[turn.tool_calls]]
name = "wait_for_agent"
arguments = { id = "c1" }
[[turn]]
for = "c1/c1"
[[turn.tool_calls]]
name = "spawn_agent"
arguments = { agent = "self", prompt = "Deeper." }
[[turn.tool_calls]]
name = "wait_for_agent"
arguments = { id = "c1" }
[[turn]]
for = "c1/c1/c1"
[[turn.tool_calls]]
name = "spawn_agent"
arguments = { agent = "self", prompt = "Deeper." }
[[turn]]
for = "c1/c1/c1"
expect = "nest at most 3 deep"
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "bottom" }
[[turn]]
for = "c1/c1"
expect = '"content":"bottom"'
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "middle" }
[[turn]]
for = "c1"
expect = '"content":"middle"'
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "top" }
[[turn]]
expect = '"content":"top"'
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "done" }
`)
		turn.Agents = agents(t, map[string]string{"self": self})
		res := runTurn(context.Background(), turn, &events{})
		if res.Status != engine.StatusAnswered || res.Answer.Content != "done" {
			t.Fatalf("Run = %s (%v)", res.Status, res.Err)
		}
		deep, err := turn.Store.ReadSubRun("run-1", "children/c1/children/c1/children/c1")
		if err != nil || deep.FinalOutput == nil || deep.FinalOutput.Content != "bottom" {
			t.Errorf("the deepest child's record = %+v (%v)", deep, err)
		}
	})
}

// Without a way to load agents, spawn_agent is refused as its result.
func TestSpawn_noLoader(t *testing.T) {
	turn := newTurn(t, spawner, `
[[turn]]
[[turn.tool_calls]]
name = "spawn_agent"
arguments = { agent = "finder", prompt = "Go." }
[[turn]]
expect = "cannot start agents in this run"
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "alone" }
`)
	ended(t, runTurn(context.Background(), turn, &events{}), engine.StatusAnswered, "end_turn")
}

// A cancel reaches every child at once (on the bubble's clock: no time
// passes), the one waited for and the one running alongside: the run ends
// cancelled, and so does each child.
func TestSpawn_cancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		turn := newTurn(t, spawner, `
[[turn]]
[[turn.tool_calls]]
name = "spawn_agent"
arguments = { agent = "finder", prompt = "One." }
[[turn.tool_calls]]
name = "spawn_agent"
arguments = { agent = "finder", prompt = "Two." }
[[turn.tool_calls]]
name = "wait_for_agent"
arguments = { id = "c1" }
[[turn]]
for = "c1"
delay_ms = 600000
text = "never"
[[turn]]
for = "c2"
delay_ms = 600000
text = "never"
`)
		turn.Agents = agents(t, map[string]string{"finder": finder})
		ctx, cancel := context.WithCancel(context.Background())
		var cancelled time.Time
		go func() {
			synctest.Wait() // both children are in their model calls
			cancelled = time.Now()
			cancel()
		}()
		res := runTurn(ctx, turn, &events{})
		if took := time.Since(cancelled); took >= 100*time.Millisecond {
			t.Errorf("the run ended %v after the cancel, want under 100ms", took)
		}
		if res.Status != engine.StatusCancelled || res.StopReason != "cancelled" {
			t.Fatalf("Run = %s/%s (%v), want cancelled", res.Status, res.StopReason, res.Err)
		}
		if len(res.Children) != 2 {
			t.Fatalf("children %+v, want 2", res.Children)
		}
		for _, c := range res.Children {
			if c.Status != engine.StatusCancelled {
				t.Errorf("child %s ended %s, want cancelled", c.Name, c.Status)
			}
		}
	})
}

// wait_for_agent on a child that failed returns its answer record with no
// content and the reason in noAnswer, the shape `coda run --json` prints.
func TestSpawn_waitFailedChild(t *testing.T) {
	turn := newTurn(t, spawner, `
[[turn]]
[[turn.tool_calls]]
name = "spawn_agent"
arguments = { agent = "finder", prompt = "Go." }
[[turn]]
for = "c1"
error = "boom"
[[turn]]
[[turn.tool_calls]]
name = "wait_for_agent"
arguments = { id = "c1" }
[[turn]]
expect = '"noAnswer":"the run failed: '
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "It failed." }
`)
	turn.Agents = agents(t, map[string]string{"finder": finder})
	res := runTurn(context.Background(), turn, &events{})
	ended(t, res, engine.StatusAnswered, "end_turn")
}

// A spawn's own output_schema that does not compile is refused as the
// call's result, before the child starts: the calling model is the caller
// and can fix it (DESIGN §19); the child's own blueprint schema would fail
// open instead.
func TestSpawn_brokenSchemaRefused(t *testing.T) {
	turn := newTurn(t, spawner, `
[[turn]]
[[turn.tool_calls]]
name = "spawn_agent"
arguments = { agent = "finder", prompt = "Go.", output_format = "json", output_schema = { type = "objekt" } }
[[turn]]
expect = "output_schema cannot be used"
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "alone" }
`)
	turn.Agents = agents(t, map[string]string{"finder": finder})
	res := runTurn(context.Background(), turn, &events{})
	ended(t, res, engine.StatusAnswered, "end_turn")
	if len(res.Children) != 0 {
		t.Errorf("a child started: %+v", res.Children)
	}
}

// A child's files are the waiting stage's, as a worker's are: in its
// status.json once wait_for_agent returns.
func TestSpawn_childFilesAreTheStages(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		turn := newTurn(t, strings.Replace(spawner, `"finder"`, `"writer"`, 1), `
[[turn]]
[[turn.tool_calls]]
name = "spawn_agent"
arguments = { agent = "writer", prompt = "Write it." }

[[turn]]
expect = "Started c1 (writer)"
[[turn.tool_calls]]
name = "wait_for_agent"
arguments = { id = "c1" }

[[turn]]
for = "c1"
[[turn.tool_calls]]
name = "write_file"
arguments = { path = "out.txt", content = "hello" }

[[turn]]
for = "c1"
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "Wrote out.txt." }

[[turn]]
expect = "Wrote out.txt."
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "It is written." }
`)
		turn.Agents = agents(t, map[string]string{"writer": `
[agent]
name = "writer"
description = "Writes things"
[stages.write]
mode = "output"
available_tools = ["write_file"]
`})
		turn.Engine.Tools = builtinTools()
		turn.Workspace = approving(turn.Workspace.Cwd())
		res := runTurn(context.Background(), turn, &events{})
		ended(t, res, engine.StatusAnswered, "end_turn")
		b, err := os.ReadFile(recordPath(turn, "stages/001-work@1/status.json"))
		if err != nil {
			t.Fatal(err)
		}
		var status struct {
			Files []string `json:"filesWritten"`
		}
		if err := json.Unmarshal(b, &status); err != nil || len(status.Files) != 1 || !strings.HasSuffix(status.Files[0], "out.txt") {
			t.Errorf("the waiting stage's status.json lists %v (%v), want the child's out.txt", status.Files, err)
		}
		if len(res.Written) != 1 {
			t.Errorf("the run's written files = %v, want the child's once", res.Written)
		}
	})
}
