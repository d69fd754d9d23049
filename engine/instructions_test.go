package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/mcp/mcptest"
)

// twoStagesModel moves from explore to report and answers there.
const twoStagesModel = `
[[turn]]
[[turn.tool_calls]]
name = "transition"
arguments = { to = "report", reason = "seen" }

[[turn]]
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "done" }
`

// submitDone answers at once.
const submitDone = `
[[turn]]
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "done" }
`

// The project's AGENTS.md is given to every stage, after its prompt and
// before the output spec, as the project's own words (not framed as data);
// the record's prompt.md shows it.
func TestProjectInstructions(t *testing.T) {
	turn, sp := scripted(t, twoStages, twoStagesModel)
	writeFile(t, turn, "AGENTS.md", "Run `make check` before you answer.\nNever touch vendor/.\n")
	res := runTurn(context.Background(), turn, &events{})
	if res.Status != engine.StatusAnswered || len(sp.reqs) != 2 {
		t.Fatalf("status %s after %d calls: %v", res.Status, len(sp.reqs), res.Err)
	}
	for i, req := range sp.reqs {
		sys := req.System
		at := strings.Index(sys, "## Project instructions (AGENTS.md)")
		body := strings.Index(sys, "Run `make check` before you answer.\nNever touch vendor/.")
		if at < 0 || body < at {
			t.Fatalf("call %d: the system prompt does not carry AGENTS.md:\n%s", i+1, sys)
		}
		if i == 0 && strings.Index(sys, "Look.") > at {
			t.Errorf("call %d: AGENTS.md comes before the stage's own prompt:\n%s", i+1, sys)
		}
		if frame := strings.Index(sys, engine.FrameNote); frame < body {
			t.Errorf("call %d: AGENTS.md is not before the frames' note and the output spec:\n%s", i+1, sys)
		}
		if strings.Contains(sys[at:], "<CODA-DATA") && strings.Index(sys[at:], "<CODA-DATA") < body-at {
			t.Errorf("call %d: AGENTS.md is framed as untrusted data:\n%s", i+1, sys)
		}
	}
	if spec := strings.Index(sp.reqs[1].System, "submit_output"); spec < strings.Index(sp.reqs[1].System, "Never touch vendor/.") {
		t.Errorf("the output spec comes before AGENTS.md:\n%s", sp.reqs[1].System)
	}
	for _, dir := range []string{"001-explore@1", "002-report@1"} {
		prompt, err := os.ReadFile(recordPath(turn, "stages/"+dir+"/prompt.md"))
		if err != nil || !strings.Contains(string(prompt), "Never touch vendor/.") {
			t.Errorf("%s/prompt.md does not show AGENTS.md (%v):\n%s", dir, err, prompt)
		}
	}
}

// A long AGENTS.md is cut at 32 KiB, at a character, the cut noted.
func TestProjectInstructions_cut(t *testing.T) {
	turn, sp := scripted(t, answerStage, submitDone)
	long := strings.Repeat("é", engine.MaxProjectInstructions) // 2 bytes each
	writeFile(t, turn, "AGENTS.md", long+"THE END")
	runTurn(context.Background(), turn, &events{})
	sys := sp.reqs[0].System
	if strings.Contains(sys, "THE END") || !strings.Contains(sys, strings.Repeat("é", engine.MaxProjectInstructions/2)) {
		t.Errorf("AGENTS.md is not cut at 32 KiB")
	}
	if !strings.Contains(sys, "[AGENTS.md is cut here: it is 65 KB, and only its first 32 KB are given.]") {
		t.Errorf("the cut is not noted:\n%s", sys[len(sys)-600:])
	}
	if strings.Contains(sys, "\uFFFD") {
		t.Errorf("the cut split a character")
	}
}

// [agent] project_instructions = false, or the engine's
// NoProjectInstructions (--no-project-instructions), leaves it out.
func TestProjectInstructions_off(t *testing.T) {
	for name, setup := range map[string]func(*testTurn){
		"blueprint": func(turn *testTurn) {
			off := false
			turn.Agent.Agent.ProjectInstructions = &off
		},
		"flag": func(turn *testTurn) { turn.Engine.NoProjectInstructions = true },
	} {
		t.Run(name, func(t *testing.T) {
			turn, sp := scripted(t, answerStage, submitDone)
			writeFile(t, turn, "AGENTS.md", "Project rules.")
			setup(turn)
			runTurn(context.Background(), turn, &events{})
			if strings.Contains(sp.reqs[0].System, "Project rules.") {
				t.Errorf("AGENTS.md given though turned off:\n%s", sp.reqs[0].System)
			}
		})
	}
}

// Only a regular file inside the workspace is read: a symlink that leads
// out of it, a directory or a named pipe is not (a warning says why), and
// a symlink to a file inside is followed.
func TestProjectInstructions_onlyRegularInside(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "secret.md")
	if err := os.WriteFile(outside, []byte("Outside rules."), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		make    func(t *testing.T, path string)
		given   string
		warning string
	}{
		"symlink out": {func(t *testing.T, path string) { symlink(t, outside, path) }, "", "AGENTS.md leads outside the workspace"},
		"directory":   {func(t *testing.T, path string) { os.Mkdir(path, 0o755) }, "", "AGENTS.md is not a regular file"},
		"fifo":        {func(t *testing.T, path string) { mcptest.Fifo(t, path) }, "", "AGENTS.md is not a regular file"},
		"symlink in": {func(t *testing.T, path string) {
			if err := os.WriteFile(filepath.Join(filepath.Dir(path), "docs.md"), []byte("Inside rules."), 0o644); err != nil {
				t.Fatal(err)
			}
			symlink(t, "docs.md", path)
		}, "Inside rules.", ""},
	} {
		t.Run(name, func(t *testing.T) {
			turn, sp := scripted(t, answerStage, submitDone)
			c.make(t, filepath.Join(turn.Workspace.Cwd(), "AGENTS.md"))
			res := runTurn(context.Background(), turn, &events{})
			sys := sp.reqs[0].System
			if strings.Contains(sys, "Outside rules.") || (c.given == "") == strings.Contains(sys, "Project instructions") {
				t.Errorf("system prompt:\n%s", sys)
			}
			if c.given != "" && !strings.Contains(sys, c.given) {
				t.Errorf("AGENTS.md not given:\n%s", sys)
			}
			found := c.warning == ""
			for _, w := range res.Warnings {
				found = found || strings.HasPrefix(w, c.warning)
			}
			if !found {
				t.Errorf("warnings %q, want one starting %q", res.Warnings, c.warning)
			}
		})
	}
}

func writeFile(t *testing.T, turn *testTurn, name, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(turn.Workspace.Cwd(), name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, path string) {
	t.Helper()
	if err := os.Symlink(target, path); err != nil {
		t.Skip("no symlinks here:", err)
	}
}
