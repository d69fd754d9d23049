package tools

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine"
)

func TestWriteFile(t *testing.T) {
	ws := newWS(t)
	res := run(t, WriteFile{}, ws, `{"path": "new/dir/a.txt", "content": "hello\n"}`)
	wantOK(t, res)
	path := filepath.Join(ws.Dir, "new/dir/a.txt")
	if got := ws.read(t, "new/dir/a.txt"); got != "hello\n" {
		t.Errorf("file holds %q", got)
	}
	if len(res.Content) != 1 || res.Content[0].Diff == nil || res.Content[0].Diff.OldText != nil || res.Content[0].Diff.NewText != "hello\n" || res.Content[0].Diff.Path != path {
		t.Errorf("a new file's diff = %+v", res.Content)
	}
	if len(res.Written) != 1 || res.Written[0] != path || len(res.Locations) != 1 || res.Locations[0].Path != path {
		t.Errorf("written %v, locations %v", res.Written, res.Locations)
	}
	if len(ws.asked) != 1 || ws.asked[0].Key != "write_file" || ws.asked[0].ToolCall.ID != "t-1" || ws.asked[0].ToolCall.Kind != "edit" ||
		len(ws.asked[0].ToolCall.Content) != 1 || ws.asked[0].ToolCall.Content[0].Diff == nil {
		t.Errorf("permission asked = %+v", ws.asked)
	}

	res = run(t, WriteFile{}, ws, `{"path": "new/dir/a.txt", "content": "bye\n"}`)
	wantOK(t, res)
	if d := res.Content[0].Diff; d.OldText == nil || *d.OldText != "hello\n" || d.NewText != "bye\n" {
		t.Errorf("a replacement's diff = %+v", d)
	}
	if !strings.HasPrefix(res.Output, "Replaced new/dir/a.txt") {
		t.Errorf("output %q", res.Output)
	}

	// Writing the same content again changes nothing and asks nothing.
	asked := len(ws.asked)
	wantOK(t, run(t, WriteFile{}, ws, `{"path": "new/dir/a.txt", "content": "bye\n"}`))
	if len(ws.asked) != asked {
		t.Error("an unchanged write asked for permission")
	}
}

func TestWriteFile_Denied(t *testing.T) {
	ws := newWS(t)
	ws.allow = false
	ws.write(t, "a.txt", "keep")
	res := run(t, WriteFile{}, ws, `{"path": "a.txt", "content": "lose"}`)
	wantError(t, res, "The user denied write_file", "Nothing was changed")
	if got := ws.read(t, "a.txt"); got != "keep" {
		t.Errorf("a denied write changed the file to %q", got)
	}
	if len(res.Written) != 0 {
		t.Errorf("a denied write reports written files %v", res.Written)
	}
}

func TestWriteFile_Refusals(t *testing.T) {
	ws := newWS(t)
	outside := t.TempDir()
	if err := os.Symlink(filepath.Join(outside, "planted"), filepath.Join(ws.Dir, "dangling")); err != nil {
		t.Fatal(err)
	}
	ws.write(t, "dir/x", "")
	ws.write(t, "bin", "\x00\x01")
	for _, tt := range []struct{ args, want string }{
		{`{"path": "../x", "content": "x"}`, "outside the workspace"},
		{`{"path": "dangling", "content": "x"}`, "outside the workspace"},
		{`{"path": "dir", "content": "x"}`, "dir is a directory"},
		{`{"path": "bin", "content": "x"}`, "binary"},
		{`{"path": "a"}`, "content is required"},
	} {
		wantError(t, run(t, WriteFile{}, ws, tt.args), tt.want)
	}
	if _, err := os.Lstat(filepath.Join(outside, "planted")); err == nil {
		t.Error("a write through a dangling symlink landed outside the workspace")
	}
	if len(ws.asked) != 0 {
		t.Errorf("refused writes asked for permission: %v", ws.asked)
	}
}

func TestEditFile(t *testing.T) {
	ws := newWS(t)
	ws.write(t, "a.go", "package a\n\nfunc A() int {\n\treturn 1\n}\n")
	res := run(t, EditFile{}, ws, `{"path": "a.go", "old": "\treturn 1\n", "new": "\treturn 2\n"}`)
	wantOK(t, res)
	if got := ws.read(t, "a.go"); got != "package a\n\nfunc A() int {\n\treturn 2\n}\n" {
		t.Errorf("edited file = %q", got)
	}
	if len(res.Locations) != 1 || res.Locations[0].Line != 4 {
		t.Errorf("locations = %v, want line 4", res.Locations)
	}
	d := res.Content[0].Diff
	if d == nil || d.OldText == nil || !strings.Contains(*d.OldText, "return 1") || !strings.Contains(d.NewText, "return 2") {
		t.Errorf("diff = %+v", d)
	}
	if len(res.Written) != 1 || ws.asked[0].Key != "edit_file" {
		t.Errorf("written %v asked %v", res.Written, ws.asked)
	}
}

func TestEditFile_Matches(t *testing.T) {
	ws := newWS(t)
	ws.write(t, "twice.txt", "x = 1\ny = 2\nx = 1\n")
	ws.write(t, "crlf.txt", "one\r\ntwo\r\nthree\r\n")
	ws.write(t, "indent.py", "def f():\n    return 1\n")

	wantError(t, run(t, EditFile{}, ws, `{"path": "twice.txt", "old": "x = 1", "new": "x = 3"}`),
		"old occurs 2 times in twice.txt (lines 1, 3)", "exactly once")
	if got := ws.read(t, "twice.txt"); got != "x = 1\ny = 2\nx = 1\n" {
		t.Errorf("an ambiguous edit changed the file: %q", got)
	}
	wantError(t, run(t, EditFile{}, ws, `{"path": "twice.txt", "old": "z = 9", "new": "z"}`), "old was not found in twice.txt")
	wantError(t, run(t, EditFile{}, ws, `{"path": "indent.py", "old": "def f():\n  return 1", "new": "x"}`), "differs from it only in whitespace")
	wantError(t, run(t, EditFile{}, ws, `{"path": "twice.txt", "old": "", "new": "z"}`), "old is empty")
	wantError(t, run(t, EditFile{}, ws, `{"path": "twice.txt", "old": "y", "new": "y"}`), "the same")
	wantError(t, run(t, EditFile{}, ws, `{"path": "missing.txt", "old": "a", "new": "b"}`), "does not exist", "write_file")
	wantError(t, run(t, EditFile{}, ws, `{"path": "/etc/hosts", "old": "a", "new": "b"}`), "outside the workspace")

	wantOK(t, run(t, EditFile{}, ws, `{"path": "crlf.txt", "old": "one\ntwo", "new": "1\n2"}`))
	if got := ws.read(t, "crlf.txt"); got != "1\r\n2\r\nthree\r\n" {
		t.Errorf("a CRLF edit gave %q", got)
	}
}

func TestEditFile_Denied(t *testing.T) {
	ws := newWS(t)
	ws.allow = false
	ws.write(t, "a.txt", "keep")
	wantError(t, run(t, EditFile{}, ws, `{"path": "a.txt", "old": "keep", "new": "lose"}`), "The user denied edit_file")
	if got := ws.read(t, "a.txt"); got != "keep" {
		t.Errorf("a denied edit changed the file to %q", got)
	}
}

// editorWrites records writes instead of touching the disk, as an editor
// with fs/write_text_file would.
type editorWrites struct {
	*testWS
	wrote map[string]string
}

func (w *editorWrites) WriteTextFile(_ context.Context, path, content string) error {
	w.wrote[path] = content
	return nil
}

func TestEditFile_ThroughWorkspace(t *testing.T) {
	ws := &editorWrites{testWS: newWS(t), wrote: map[string]string{}}
	path := ws.write(t, "a.txt", "alpha beta")
	wantOK(t, run(t, EditFile{}, ws, `{"path": "a.txt", "old": "beta", "new": "gamma"}`))
	if ws.wrote[path] != "alpha gamma" {
		t.Errorf("the workspace was asked to write %v", ws.wrote)
	}
	if got := ws.read(t, "a.txt"); got != "alpha beta" {
		t.Errorf("the tool wrote the disk itself: %q", got)
	}
	var _ engine.Workspace = ws
}

// Under overwrite_artifacts = false (Call.KeepExisting), write_file
// refuses to replace a file that exists before it writes or asks; a new
// file is written as usual. edit_file agrees: an edit changes a file that
// exists, which an artifact may then not be, so it is refused before
// anything is written.
func TestWriteFile_KeepExisting(t *testing.T) {
	ws := newWS(t)
	ws.write(t, "notes.md", "# The user's own notes\n")
	keep := func(args string) engine.ToolResult {
		return WriteFile{}.Run(context.Background(), &engine.Call{ID: "t-1", Args: []byte(args), Workspace: ws, Progress: func(engine.ToolCallEvent) {}, KeepExisting: true})
	}
	res := keep(`{"path": "notes.md", "content": "# Generated\n"}`)
	wantError(t, res, "notes.md exists, and overwrite_artifacts is false")
	if got := ws.read(t, "notes.md"); got != "# The user's own notes\n" || len(ws.asked) != 0 || len(res.Written) != 0 {
		t.Errorf("the file holds %q after a refused write; asked %d times; written %v", got, len(ws.asked), res.Written)
	}
	wantOK(t, keep(`{"path": "generated-notes.md", "content": "# Generated\n"}`))
	if got := ws.read(t, "generated-notes.md"); got != "# Generated\n" {
		t.Errorf("a new file holds %q", got)
	}

	asked := len(ws.asked) // the new file's
	res = EditFile{}.Run(context.Background(), &engine.Call{ID: "t-2", Args: []byte(`{"path": "notes.md", "old": "own", "new": "generated"}`),
		Workspace: ws, Progress: func(engine.ToolCallEvent) {}, KeepExisting: true})
	wantError(t, res, "edit_file refused: notes.md exists, and overwrite_artifacts is false")
	if got := ws.read(t, "notes.md"); got != "# The user's own notes\n" || len(ws.asked) != asked || len(res.Written) != 0 {
		t.Errorf("the file holds %q after a refused edit; asked %d times; written %v", got, len(ws.asked)-asked, res.Written)
	}
}
