//go:build unix

package engine_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/local"
	"github.com/coda-acp/coda/engine/taint"
	"github.com/coda-acp/coda/engine/tools"
)

// BenchmarkTurn_grep20k is a turn with one grep call in a 20,000-file tree
// (400 folders of 50), the gate off, wall and CPU time (a unix rusage): what a turn costs beside the walk of
// the private files under the roots (issue 32, case 14). Compare it with a
// build of another revision in the same run (scripts/bench/README.md).
func BenchmarkTurn_grep20k(b *testing.B) { benchTurnGrep20k(b, nil) }

// BenchmarkTurn_grep20kSession is the same turn, again and again in one
// session (engine.Turn.Private): the private files found at its first
// turn, a stat of each folder at the others.
func BenchmarkTurn_grep20kSession(b *testing.B) { benchTurnGrep20k(b, taint.NewIndex()) }

func benchTurnGrep20k(b *testing.B, session *taint.Index) {
	tree := b.TempDir()
	for d := range 400 {
		sub := filepath.Join(tree, fmt.Sprintf("pkg%03d", d))
		if err := os.Mkdir(sub, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := range 50 {
			if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%02d.go", f)), []byte("package x\n"), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := os.WriteFile(filepath.Join(tree, "pkg007", "needle.go"), []byte("package x // needle\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	cpu := func() time.Duration {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	var spent time.Duration
	// The tree as a session finds it: older than its first walk.
	old := time.Now().Add(-time.Hour)
	_ = filepath.WalkDir(tree, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chtimes(path, old, old)
		}
		return nil
	})
	for b.Loop() {
		start := cpu()
		turn := newTurn(b, `
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
		setPrivate(turn.Turn, session)
		if res := runTurn(context.Background(), turn, &events{}); res.Status != engine.StatusAnswered {
			b.Fatalf("status %s: %v", res.Status, res.Err)
		}
		spent += cpu() - start
	}
	// The process's CPU time per turn: on a loaded machine, wall time
	// measures the load as much as the turn.
	b.ReportMetric(float64(spent.Nanoseconds())/float64(b.N), "cpu-ns/op")
}
