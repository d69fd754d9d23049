package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestResolve(t *testing.T) {
	ws := newWS(t)
	outside, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	extra, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws.Extra = []string{extra}
	ws.write(t, "src/a.go", "package a\n")
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustLink := func(target, name string) {
		if err := os.Symlink(target, filepath.Join(ws.Dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	mustLink(filepath.Join(outside, "secret"), "out-file")
	mustLink(outside, "out-dir")
	mustLink(filepath.Join(outside, "not-yet"), "dangling-out")
	mustLink("src", "in-dir")
	mustLink(filepath.Join(ws.Dir, "src", "new.go"), "dangling-in")

	tests := []struct {
		path    string
		want    string // resolved path, relative to ws.Dir; "" when refused
		wantErr string
	}{
		{path: "src/a.go", want: "src/a.go"},
		{path: "./src/../src/a.go", want: "src/a.go"},
		{path: filepath.Join(ws.Dir, "src/a.go"), want: "src/a.go"},
		{path: "src/new/deeper/file.txt", want: "src/new/deeper/file.txt"},
		{path: ".", want: "."},
		{path: "in-dir/a.go", want: "in-dir/a.go"},
		{path: "dangling-in", want: "dangling-in"},
		{path: "../x", wantErr: "outside the workspace"},
		{path: "src/../../x", wantErr: "outside the workspace"},
		{path: "/etc/passwd", wantErr: "outside the workspace"},
		{path: filepath.Join(outside, "secret"), wantErr: "outside the workspace"},
		{path: "out-file", wantErr: "resolves to " + filepath.Join(outside, "secret")},
		{path: "out-dir/secret", wantErr: "outside the workspace"},
		{path: "out-dir/new-file", wantErr: "outside the workspace"},
		{path: "dangling-out", wantErr: "outside the workspace"},
		{path: "", wantErr: "empty"},
		{path: "a\x00b", wantErr: "NUL"},
		{path: "src/a.go/x", wantErr: "not a directory"},
	}
	for _, tt := range tests {
		got, err := resolve(ws, tt.path)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("resolve(%q) = %q, %v; want an error saying %q", tt.path, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("resolve(%q): %v", tt.path, err)
			continue
		}
		if want := filepath.Join(ws.Dir, tt.want); got != want {
			t.Errorf("resolve(%q) = %q, want %q", tt.path, got, want)
		}
	}

	// An additional root is inside the workspace too.
	p := filepath.Join(extra, "notes.md")
	if got, err := resolve(ws, p); err != nil || got != p {
		t.Errorf("resolve(%q) in an additional root = %q, %v", p, got, err)
	}
}

func TestResolve_SymlinkLoop(t *testing.T) {
	ws := newWS(t)
	if err := os.Symlink("b", filepath.Join(ws.Dir, "a")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a", filepath.Join(ws.Dir, "b")); err != nil {
		t.Fatal(err)
	}
	if _, err := resolve(ws, "a"); err == nil {
		t.Error("a symlink loop resolved")
	}
}
