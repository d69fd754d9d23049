//go:build unix

package engine_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/taint"
)

// BenchmarkTurn_grep20kRun is BenchmarkTurn_grep20k as `coda run` runs
// it: each turn a session of its own, its Index opened on the state an
// earlier run kept (taint.OpenIndex), so it stats each folder rather than
// walking the tree (issue 32, case 14). Compare its cpu-ns/op with
// BenchmarkTurn_grep20k of a build from before the walk, in the same run
// (scripts/bench/README.md).
func BenchmarkTurn_grep20kRun(b *testing.B) {
	tree, state := grepTree(b, 400), b.TempDir()
	cpu := func() time.Duration {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	run := func() {
		if res := runTurn(context.Background(), grepTurn(b, tree, taint.OpenIndex(state)), &events{}); res.Status != engine.StatusAnswered {
			b.Fatalf("status %s: %v", res.Status, res.Err)
		}
	}
	run() // the run before, which walked and kept what it found
	var spent time.Duration
	for b.Loop() {
		start := cpu()
		run()
		spent += cpu() - start
	}
	b.ReportMetric(float64(spent.Nanoseconds())/float64(b.N), "cpu-ns/op")
}
