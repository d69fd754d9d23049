package engine_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/local"
)

// Files a shell command made, changed or removed are listed as the files
// write_file wrote are: in the visit's status.json, the next stage's
// preamble and the plan's entry for the stage, and run.json; build output
// (dist, target) too. A file in the other pruned folders (.git,
// node_modules, ...) and the run's own record are not.
func TestRun_filesTouchedByShell(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the script's command is POSIX sh")
	}
	turn, sp := scripted(t, `
[agent]
name = "two"
[stages.build]
available_tools = ["shell", "write_file"]
[stages.build.transitions.report]
hint = "Built"
[stages.report]
mode = "output"
`, `
[[turn]]
[[turn.tool_calls]]
name = "shell"
arguments = { command = "mkdir -p out node_modules/x dist target/release .git && echo made > out/made.txt && echo again >> old.txt && rm gone.txt && echo dep > node_modules/x/dep.js && echo app > dist/app.js && echo bin > target/release/app && echo ref > .git/HEAD" }
[[turn.tool_calls]]
name = "write_file"
arguments = { path = "notes.md", content = "notes" }
[[turn]]
[[turn.tool_calls]]
name = "transition"
arguments = { to = "report" }

[[turn]]
text = "Built."
`)
	turn.Engine.Tools = builtinTools()
	dir := turn.Workspace.Cwd()
	turn.Workspace = approving(dir)
	for _, f := range []string{"old.txt", "gone.txt", "kept.txt"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("before\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sink := &events{}
	res := runTurn(context.Background(), turn, sink)
	ended(t, res, engine.StatusAnswered, "end_turn")

	want := []string{"dist/app.js", "gone.txt", "notes.md", "old.txt", "out/made.txt", "target/release/app"}
	var status struct {
		Files []string `json:"filesWritten"`
	}
	b, err := os.ReadFile(recordPath(turn, "stages/001-build@1/status.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &status); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range status.Files {
		rel, _ := filepath.Rel(dir, f)
		got = append(got, filepath.ToSlash(rel))
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("status.json's filesWritten %q, want %q", got, want)
	}
	if len(res.Written) != len(want) {
		t.Errorf("the run wrote %q, want %d files", res.Written, len(want))
	}
	preamble := sp.reqs[2].Messages[0].Text
	if !strings.Contains(preamble, "Files written: ") || !strings.Contains(preamble, "out/made.txt") || strings.Contains(preamble, "node_modules") {
		t.Errorf("the report stage's preamble:\n%s", preamble)
	}
	var plan []engine.PlanEntry
	for _, ev := range sink.evs {
		if ev.Kind == engine.EventPlan {
			plan = ev.Plan
		}
	}
	if len(plan) == 0 || plan[0].Content != "build" || len(plan[0].Files) != len(want) || !slices.Contains(plan[0].Files, "out/made.txt") {
		t.Errorf("the plan's last entries %+v, want build with its %d files", plan, len(want))
	}
}

// mcpWriter stands in for an MCP server's tool that writes a file and
// says nothing of it.
type mcpWriter struct{ dir string }

func (mcpWriter) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: "fs__save", Schema: json.RawMessage(`{"type":"object"}`)}
}
func (mcpWriter) Kind() string          { return "other" }
func (mcpWriter) WritesUntracked() bool { return true }
func (w mcpWriter) Run(context.Context, *engine.Call) engine.ToolResult {
	if err := os.WriteFile(filepath.Join(w.dir, "saved.txt"), []byte("saved"), 0o644); err != nil {
		return engine.Errorf("%v", err)
	}
	return engine.ToolResult{Output: "Saved."}
}

// An MCP tool that writes without saying so is watched as shell is.
func TestRun_filesTouchedByMCP(t *testing.T) {
	turn := newTurn(t, `
[agent]
name = "one"
[stages.answer]
mode = "output"
available_tools = ["fs__save"]
`, `
[[turn]]
[[turn.tool_calls]]
name = "fs__save"
arguments = {}
[[turn]]
text = "Saved."
`)
	turn.Engine.Tools = map[string]engine.Tool{"fs__save": mcpWriter{turn.Workspace.Cwd()}}
	res := runTurn(context.Background(), turn, &events{})
	ended(t, res, engine.StatusAnswered, "end_turn")
	if len(res.Written) != 1 || filepath.Base(res.Written[0]) != "saved.txt" {
		t.Errorf("the run wrote %q, want saved.txt", res.Written)
	}
}

// approving is the local disk at dir, every permission granted.
func approving(dir string) *local.Workspace {
	return &local.Workspace{Dir: dir, Approve: func(context.Context, engine.PermissionRequest) (bool, error) { return true, nil }}
}
