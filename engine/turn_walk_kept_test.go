package engine_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/local"
	"github.com/coda-acp/coda/engine/taint"
	"github.com/coda-acp/coda/engine/tools"
	"github.com/coda-acp/coda/internal/rootfs"
)

// grepTree is a tree of folders folders of 50 files each, older than any
// walk, with a needle in pkg007.
func grepTree(t testing.TB, folders int) string {
	tree := t.TempDir()
	for d := range folders {
		sub := filepath.Join(tree, fmt.Sprintf("pkg%03d", d))
		if err := os.Mkdir(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		for f := range 50 {
			if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%02d.go", f)), []byte("package x\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.WriteFile(filepath.Join(tree, "pkg007", "needle.go"), []byte("package x // needle\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The tree as a session finds it: older than its first walk.
	old := time.Now().Add(-time.Hour)
	_ = filepath.WalkDir(tree, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chtimes(path, old, old)
		}
		return nil
	})
	return tree
}

// grepTurn is a turn with one grep call in tree, gate off, whose session
// looks for private files through private.
func grepTurn(t testing.TB, tree string, private *taint.Index) *testTurn {
	turn := newTurn(t, `
[agent]
name = "one"
[stages.answer]
mode = "output"
available_tools = ["grep"]
`, `
[[turn]]
[[turn.tool_calls]]
name = "grep"
arguments = { pattern = "needle", path = "pkg007" }

[[turn]]
text = "Found it."
`)
	turn.Engine.Tools = tools.Builtin()
	turn.Workspace = &local.Workspace{Dir: tree}
	turn.Turn.Private = private
	return turn
}

// A one-turn run (`coda run`: a session of its own, its Index opened on
// coda's state) in a workspace an earlier run looked through reads none
// of its folders to find the private files whose secrets the record
// masks (issue 32, case 14); the first run walks it.
func TestTurn_oneTurnRunWalksNoTree(t *testing.T) {
	tree, state := grepTree(t, 40), t.TempDir()
	run := func() int64 {
		t.Helper()
		turn := grepTurn(t, tree, taint.OpenIndex(state))
		before := rootfs.FoldersRead.Load()
		if res := runTurn(context.Background(), turn, &events{}); res.Status != engine.StatusAnswered {
			t.Fatalf("status %s: %v", res.Status, res.Err)
		}
		return rootfs.FoldersRead.Load() - before
	}
	if read := run(); read < 41 {
		t.Fatalf("the first run read %d folders, want the tree's 41", read)
	}
	for i := range 2 {
		if read := run(); read != 0 {
			t.Errorf("run %d read %d folders, want none: it walked the workspace again", i+2, read)
		}
	}
}
