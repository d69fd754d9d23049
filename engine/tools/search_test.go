package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestListFiles(t *testing.T) {
	ws := newWS(t)
	for _, f := range []string{"main.go", "a/b/c.go", "a/x.txt", "a/b/y.txt", ".git/HEAD", "docs/readme.md"} {
		ws.write(t, f, "x\n")
	}
	tests := []struct {
		args string
		want []string
	}{
		{`{}`, []string{"a/b/c.go", "a/b/y.txt", "a/x.txt", "docs/readme.md", "main.go"}},
		{`{"pattern": "*.go"}`, []string{"a/b/c.go", "main.go"}},
		{`{"pattern": "**/*.go"}`, []string{"a/b/c.go", "main.go"}},
		{`{"pattern": "a/*.txt"}`, []string{"a/x.txt"}},
		{`{"path": "a", "pattern": "*.txt"}`, []string{"a/b/y.txt", "a/x.txt"}},
		{`{"path": "a/b"}`, []string{"a/b/c.go", "a/b/y.txt"}},
		{`{"pattern": "*.rs"}`, nil},
	}
	for _, tt := range tests {
		res := run(t, ListFiles{}, ws, tt.args)
		wantOK(t, res)
		lines := strings.Split(strings.TrimSpace(res.Output), "\n")
		got := lines[1:]
		if len(tt.want) == 0 {
			if !strings.HasPrefix(res.Output, "No files") {
				t.Errorf("%s: %q, want no files", tt.args, res.Output)
			}
			continue
		}
		if strings.Join(got, ",") != strings.Join(tt.want, ",") {
			t.Errorf("%s: listed %v, want %v", tt.args, got, tt.want)
		}
	}
	wantError(t, run(t, ListFiles{}, ws, `{"path": "main.go"}`), "is a file")
	wantError(t, run(t, ListFiles{}, ws, `{"path": ".."}`), "outside the workspace")
	wantError(t, run(t, ListFiles{}, ws, `{"pattern": "[a"}`), "malformed")
	wantError(t, run(t, ListFiles{}, ws, `{"path": "nope"}`), "does not exist")
}

func TestListFiles_Capped(t *testing.T) {
	ws := newWS(t)
	for i := range listMax + 7 {
		ws.write(t, fmt.Sprintf("f%04d.txt", i), "")
	}
	res := run(t, ListFiles{}, ws, `{}`)
	wantOK(t, res)
	if n := strings.Count(res.Output, ".txt\n"); n != listMax {
		t.Errorf("listed %d paths, want %d", n, listMax)
	}
	if !strings.Contains(res.Output, fmt.Sprintf("%d files under .", listMax+7)) || !strings.Contains(res.Output, "[7 more not shown") {
		t.Errorf("the cap is not reported: %s", res.Output[len(res.Output)-200:])
	}
}

func TestGrep(t *testing.T) {
	ws := newWS(t)
	ws.write(t, "main.go", "package main\n\nfunc main() {\n\tTODO()\n}\n")
	ws.write(t, "lib/util.go", "package lib\n// todo: later\nfunc TODO() {}\n")
	ws.write(t, "lib/notes.txt", "TODO write notes")
	ws.write(t, ".git/config", "TODO in git\n")
	ws.write(t, "bin.dat", "TODO\x00\x01\x02")
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.go"), []byte("TODO secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.go"), filepath.Join(ws.Dir, "link.go")); err != nil {
		t.Fatal(err)
	}

	res := run(t, Grep{}, ws, `{"pattern": "TODO"}`)
	wantOK(t, res)
	for _, want := range []string{"main.go:4: \tTODO()", "lib/util.go:3: func TODO() {}", "lib/notes.txt:1: TODO write notes", "3 matches in 3 files", "1 binary skipped"} {
		if !strings.Contains(res.Output, want) {
			t.Errorf("grep output lacks %q:\n%s", want, res.Output)
		}
	}
	for _, not := range []string{"git", "secret", "bin.dat"} {
		if strings.Contains(res.Output, not) {
			t.Errorf("grep output shows %q:\n%s", not, res.Output)
		}
	}
	if len(res.Locations) != 3 || res.Locations[0].Line == 0 {
		t.Errorf("locations = %v", res.Locations)
	}

	res = run(t, Grep{}, ws, `{"pattern": "(?i)todo", "glob": "*.go"}`)
	wantOK(t, res)
	if !strings.Contains(res.Output, "3 matches in 2 files") || strings.Contains(res.Output, "notes.txt") {
		t.Errorf("glob *.go:\n%s", res.Output)
	}
	res = run(t, Grep{}, ws, `{"pattern": "func", "path": "lib/util.go"}`)
	wantOK(t, res)
	if !strings.Contains(res.Output, "lib/util.go:3:") {
		t.Errorf("a single file:\n%s", res.Output)
	}
	res = run(t, Grep{}, ws, `{"pattern": "nothing-like-this"}`)
	wantOK(t, res)
	if !strings.HasPrefix(res.Output, "No matches") {
		t.Errorf("no match: %s", res.Output)
	}
	wantError(t, run(t, Grep{}, ws, `{"pattern": "("}`), "not a valid regular expression")
	wantError(t, run(t, Grep{}, ws, `{"pattern": "x", "path": "/etc"}`), "outside the workspace")
	wantError(t, run(t, Grep{}, ws, `{"path": "."}`), "pattern is required")
}

func TestGrep_CappedWithCount(t *testing.T) {
	ws := newWS(t)
	ws.write(t, "many.txt", strings.Repeat("hit\n", grepMaxMatches+42))
	ws.write(t, "long.txt", strings.Repeat("é", 1000)+"hit\n")
	res := run(t, Grep{}, ws, `{"pattern": "hit"}`)
	wantOK(t, res)
	if n := strings.Count(res.Output, "\n") - 2; n != grepMaxMatches {
		t.Errorf("shown %d matches, want %d", n, grepMaxMatches)
	}
	if !strings.Contains(res.Output, fmt.Sprintf("%d matches in 2 files", grepMaxMatches+43)) || !strings.Contains(res.Output, "[43 more matches not shown") {
		t.Errorf("the cap is not reported:\n%s", res.Output)
	}
	if !strings.Contains(res.Output, "long.txt:1: éé") || !strings.Contains(res.Output, "[…]") {
		t.Errorf("a long line is not clipped:\n%.400s", res.Output)
	}
}
