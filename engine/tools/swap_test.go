package tools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/coda-acp/coda/engine"
)

// swapOnApproval makes ws's permission callback (the moment a tool waits
// on the user, after it checked its path) move name aside and put a
// symlink to target in its place, then approve.
func swapOnApproval(t *testing.T, ws *testWS, name, target string) {
	t.Helper()
	ws.Approve = func(context.Context, engine.PermissionRequest) (bool, error) {
		p := filepath.Join(ws.Dir, name)
		if err := os.Rename(p, p+".moved"); err != nil {
			t.Error(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Error(err)
		}
		return true, nil
	}
}

func outsideDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func wantFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(files) {
		t.Errorf("%s holds %d entries, want %d", dir, len(entries), len(files))
	}
	for name, want := range files {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(b) != want {
			t.Errorf("%s holds %q (%v), want %q", name, b, err, want)
		}
	}
}

// A folder or file swapped for a symlink to outside while the user is
// asked cannot lead write_file or edit_file outside the workspace: the
// write goes through the workspace's roots, which refuse it.
func TestChange_swappedWhileAsking(t *testing.T) {
	tests := []struct {
		name, tool, args, swap string
	}{
		{"write_file, folder swapped", "write_file", `{"path": "dir/new.txt", "content": "pwned"}`, "dir"},
		{"write_file, file swapped", "write_file", `{"path": "dir/f.txt", "content": "pwned"}`, "dir/f.txt"},
		{"edit_file, folder swapped", "edit_file", `{"path": "dir/f.txt", "old": "keep", "new": "pwned"}`, "dir"},
		{"edit_file, file swapped", "edit_file", `{"path": "dir/f.txt", "old": "keep", "new": "pwned"}`, "dir/f.txt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := newWS(t)
			ws.write(t, "dir/f.txt", "keep")
			outside := outsideDir(t, map[string]string{"f.txt": "keep"})
			target := outside
			if tt.swap == "dir/f.txt" {
				target = filepath.Join(outside, "f.txt")
			}
			swapOnApproval(t, ws, tt.swap, target)
			res := run(t, Builtin()[tt.tool], ws, tt.args)
			wantError(t, res, "outside the workspace")
			wantFiles(t, outside, map[string]string{"f.txt": "keep"})
			if len(res.Written) != 0 {
				t.Errorf("written %v", res.Written)
			}
		})
	}
}

// Paths outside are refused however they are written, and symlinks that
// stay inside the workspace still work for every tool.
func TestTools_symlinksInside(t *testing.T) {
	ws := newWS(t)
	ws.write(t, "src/a.go", "package a\n// TODO here\n")
	for _, l := range [][2]string{{"src", "rel-dir"}, {filepath.Join(ws.Dir, "src"), "abs-dir"}, {"src/a.go", "rel-file"}} {
		if err := os.Symlink(l[0], filepath.Join(ws.Dir, l[1])); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"rel-dir/a.go", "abs-dir/a.go", "rel-file"} {
		wantOK(t, run(t, ReadFile{}, ws, `{"path": "`+p+`"}`))
		wantOK(t, run(t, Grep{}, ws, `{"pattern": "TODO", "path": "`+p+`"}`))
	}
	for _, p := range []string{"rel-dir", "abs-dir"} {
		wantOK(t, run(t, ListFiles{}, ws, `{"path": "`+p+`"}`))
	}
	wantOK(t, run(t, WriteFile{}, ws, `{"path": "abs-dir/new/b.go", "content": "package new\n"}`))
	wantOK(t, run(t, EditFile{}, ws, `{"path": "rel-file", "old": "TODO", "new": "DONE"}`))
	if got := ws.read(t, "src/new/b.go"); got != "package new\n" {
		t.Errorf("b.go holds %q", got)
	}
	if got := ws.read(t, "src/a.go"); got != "package a\n// DONE here\n" {
		t.Errorf("a.go holds %q", got)
	}
	outside := outsideDir(t, map[string]string{"secret": "s"})
	for _, p := range []string{"../x", "src/../../x", filepath.Join(outside, "secret"), "/etc/passwd"} {
		for tool, args := range map[string]string{
			"read_file":  `{"path": %q}`,
			"write_file": `{"path": %q, "content": "x"}`,
			"edit_file":  `{"path": %q, "old": "s", "new": "t"}`,
			"list_files": `{"path": %q}`,
			"grep":       `{"path": %q, "pattern": "s"}`,
		} {
			wantError(t, run(t, Builtin()[tool], ws, fmt.Sprintf(args, p)), "outside the workspace")
		}
	}
	wantFiles(t, outside, map[string]string{"secret": "s"})
}
