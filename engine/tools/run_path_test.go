package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine"
)

// runCall runs tool with args and the run's record at runDir.
func runCall(t *testing.T, tool runner, ws engine.Workspace, runDir string, args string) engine.ToolResult {
	t.Helper()
	return tool.Run(t.Context(), &engine.Call{ID: "t-1", Args: []byte(args), Workspace: ws, RunDir: runDir, Progress: func(engine.ToolCallEvent) {}})
}

// run:PATH reads the run's own record (DESIGN §15): read-only, and
// confined to it, whatever the path or a symlink in the record says.
func TestRunPaths(t *testing.T) {
	ws := newWS(t)
	runDir := filepath.Join(t.TempDir(), "runs", "r-1")
	answer := filepath.Join(runDir, "stages", "001-review@1", "answer")
	os.MkdirAll(filepath.Dir(answer), 0o755)
	os.WriteFile(answer, []byte("the whole answer"), 0o644)
	secret := filepath.Join(filepath.Dir(runDir), "secret.txt")
	os.WriteFile(secret, []byte("outside"), 0o644)
	os.Symlink(secret, filepath.Join(runDir, "link"))

	r := decodeRead(t, runCall(t, ReadFile{}, ws, runDir, `{"path": "run:stages/001-review@1/answer"}`))
	if r.Content != "the whole answer" || r.Path != "run:stages/001-review@1/answer" {
		t.Errorf("read %+v", r)
	}
	res := runCall(t, ListFiles{}, ws, runDir, `{"path": "run:"}`)
	wantOK(t, res)
	if !strings.Contains(res.Output, "run:stages/001-review@1/answer") || !strings.Contains(res.Output, "under run:") {
		t.Errorf("list_files run: =\n%s", res.Output)
	}

	for _, p := range []string{"run:../secret.txt", "run:stages/../../secret.txt", "run:" + secret, "run:link"} {
		res := runCall(t, ReadFile{}, ws, runDir, `{"path": "`+p+`"}`)
		wantError(t, res, "read_file refused: "+p)
		if strings.Contains(res.Output, "outside\"") || strings.Contains(res.Output, `"content"`) {
			t.Errorf("%s: read outside the record: %s", p, res.Output)
		}
	}
	wantError(t, runCall(t, ListFiles{}, ws, runDir, `{"path": "run:.."}`), "outside the run's record")
	wantError(t, runCall(t, ReadFile{}, ws, "", `{"path": "run:stages"}`), "this run keeps no record")
	wantError(t, runCall(t, WriteFile{}, ws, runDir, `{"path": "run:stages/001-review@1/answer", "content": "x"}`), "read-only")
	wantError(t, runCall(t, EditFile{}, ws, runDir, `{"path": "run:stages/001-review@1/answer", "old": "the", "new": "a"}`), "read-only")
	if b, _ := os.ReadFile(answer); string(b) != "the whole answer" {
		t.Errorf("the record changed: %q", b)
	}
	// A path without the prefix is the workspace's, as before.
	os.WriteFile(filepath.Join(ws.Dir, "a.txt"), []byte("workspace"), 0o644)
	if r := decodeRead(t, runCall(t, ReadFile{}, ws, runDir, `{"path": "a.txt"}`)); r.Content != "workspace" {
		t.Errorf("read %+v", r)
	}
}

// grep searches the run's record as read_file reads it: run: paths are
// confined to the record, and a match names its run: path, with no editor
// location (the record is coda's, not the project's).
func TestRunPaths_grep(t *testing.T) {
	ws := newWS(t)
	runDir := filepath.Join(t.TempDir(), "runs", "r-1")
	answer := filepath.Join(runDir, "workers", "w1", "answer")
	os.MkdirAll(filepath.Dir(answer), 0o755)
	os.WriteFile(answer, []byte("line one\nthe needle is here\n"), 0o644)
	secret := filepath.Join(filepath.Dir(runDir), "secret.txt")
	os.WriteFile(secret, []byte("needle outside\n"), 0o644)
	os.Symlink(secret, filepath.Join(runDir, "link"))
	os.WriteFile(filepath.Join(ws.Dir, "w.txt"), []byte("needle in the workspace\n"), 0o644)

	res := runCall(t, Grep{}, ws, runDir, `{"pattern": "needle", "path": "run:"}`)
	wantOK(t, res)
	if !strings.Contains(res.Output, "1 matches in 1 files under run:") || !strings.Contains(res.Output, "run:workers/w1/answer:2: the needle is here") {
		t.Errorf("grep run: =\n%s", res.Output)
	}
	if strings.Contains(res.Output, "outside") || strings.Contains(res.Output, "workspace") || len(res.Locations) != 0 {
		t.Errorf("grep run: went outside the record, or located it in the editor: %s %v", res.Output, res.Locations)
	}
	res = runCall(t, Grep{}, ws, runDir, `{"pattern": "needle", "path": "run:workers/w1/answer"}`)
	if !strings.Contains(res.Output, "run:workers/w1/answer:2:") {
		t.Errorf("grep of one record file =\n%s", res.Output)
	}
	for _, p := range []string{"run:..", "run:../secret.txt", "run:" + secret, "run:link"} {
		res := runCall(t, Grep{}, ws, runDir, `{"pattern": "needle", "path": "`+p+`"}`)
		wantError(t, res, "grep refused: "+p)
	}
	wantError(t, runCall(t, Grep{}, ws, "", `{"pattern": "x", "path": "run:"}`), "this run keeps no record")
	// Without the prefix, the workspace, as before.
	if res := runCall(t, Grep{}, ws, runDir, `{"pattern": "needle"}`); !strings.Contains(res.Output, "w.txt:1:") {
		t.Errorf("grep of the workspace =\n%s", res.Output)
	}
}
