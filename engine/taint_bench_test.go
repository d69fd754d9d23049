package engine

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// privateMiB is a 1 MiB .env of random keys, one a line.
func privateMiB() string {
	rng := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	key := make([]byte, 30)
	for i := 0; b.Len() < 1<<20; i++ {
		for j := range key {
			key[j] = byte(rng.Uint32())
		}
		fmt.Fprintf(&b, "KEY_%05d=%s\n", i, base64.RawURLEncoding.EncodeToString(key))
	}
	return b.String()
}

// taintedVisit is a stage visit of a run whose gate (policy deny) has read
// text from .env.
func taintedVisit(b *testing.B, text string) *stageVisit {
	dir := b.TempDir()
	ws := &LocalWorkspace{Dir: dir}
	r := &run{e: &Engine{Taint: TaintLaunch{Policy: TaintDeny}}, t: &Turn{Workspace: ws, Agent: &Blueprint{}}, log: nil}
	r.taint = newTaint(r)
	r.taint.read([]Source{{Path: filepath.Join(dir, ".env"), Text: text}})
	return &stageVisit{run: r, rec: &visitRecord{}}
}

// BenchmarkTaintGate is the gate's cost per sink call once a 1 MiB private
// file was read, for calls that carry none of it (the common case: no
// audit is written): a shell command, a 4 KiB answer, and the largest
// answer (256 KiB). ref-shownArgs is what the engine already spends on each
// call, showing its arguments, for scale.
func BenchmarkTaintGate(b *testing.B) {
	v := taintedVisit(b, privateMiB())
	if v.run.taint.lines.full {
		b.Fatal("the 1 MiB file overflowed the bounds: the benchmark would measure nothing")
	}
	cmd := "go test ./... -run TestSomething -count=1 2>&1 | tail -n 40 && git status --short"
	answer := strings.Repeat("The handler reads its key from the environment and retries on 429. ", 62)
	for _, bc := range []struct {
		name    string
		payload string
	}{
		{"shell-100B", cmd},
		{"answer-4KiB", answer[:4096]},
		{"answer-256KiB", strings.Repeat(answer[:4096], 64)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ctx := context.Background()
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.payload)))
			for b.Loop() {
				if out := v.gate(ctx, sinkCall{sink: "shell", payload: []string{bc.payload}}); !out.allowed {
					b.Fatal("gated a clean call")
				}
			}
		})
	}
	b.Run("ref-shownArgs-shell", func(b *testing.B) {
		args, _ := json.Marshal(map[string]string{"command": cmd})
		tc := ToolCall{Name: "shell", Arguments: args}
		b.ReportAllocs()
		for b.Loop() {
			_ = shownArgs(tc)
		}
	})
}

// BenchmarkTaintRead is the one-time cost of taking in a 1 MiB private file,
// and the memory the gate keeps of it.
func BenchmarkTaintRead(b *testing.B) {
	text := privateMiB()
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	var kept uint64
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		var p privateLines
		p.add(text, 0)
		runtime.GC()
		runtime.ReadMemStats(&after)
		kept = after.HeapAlloc - before.HeapAlloc
		runtime.KeepAlive(&p)
	}
	b.ReportMetric(float64(kept), "kept-B")
}
