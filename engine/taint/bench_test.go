package taint

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"
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

// BenchmarkRead is the one-time cost of taking in a 1 MiB private file,
// and the memory the gate keeps of it (kept-B); cpu-ms/MiB is the
// process's CPU time taking it in (a unix rusage; wall time elsewhere),
// which the load of a shared machine moves less than wall time. Compare
// it with a build of another revision in the same run
// (scripts/bench/README.md).
func BenchmarkRead(b *testing.B) {
	text := privateMiB()
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	var kept uint64
	var probe privateLines
	if probe.add(text, 0); probe.full {
		b.Fatal("the 1 MiB file overflowed the bounds: BenchmarkTaintGate would measure nothing")
	}
	var spent time.Duration
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		var p privateLines
		start := cpuTime()
		p.add(text, 0)
		spent += cpuTime() - start
		runtime.GC()
		runtime.ReadMemStats(&after)
		kept = after.HeapAlloc - before.HeapAlloc
		runtime.KeepAlive(&p)
	}
	b.ReportMetric(float64(kept), "kept-B")
	b.ReportMetric(float64(spent.Nanoseconds())/1e6/float64(b.N)/(float64(len(text))/(1<<20)), "cpu-ms/MiB")
}

// BenchmarkFind is the check of a call once a 1 MiB private file was
// read: a payload that carries none of it (a shell command, a 4 KiB and a
// 256 KiB answer), and a 4 KiB answer that quotes a piece of a key.
func BenchmarkFind(b *testing.B) {
	text := privateMiB()
	var p privateLines
	p.add(text, 0)
	cmd := "go test ./... -run TestSomething -count=1 2>&1 | tail -n 40 && git status --short"
	answer := strings.Repeat("The handler reads its key from the environment and retries on 429. ", 62)[:4096]
	line := text[strings.Index(text, "\n")+1:]
	piece := line[strings.Index(line, "=")+5:][:pieceLen]
	for _, bc := range []struct {
		name    string
		payload string
		found   bool
	}{
		{"shell-100B", cmd, false},
		{"answer-4KiB", answer, false},
		{"answer-256KiB", strings.Repeat(answer, 64), false},
		{"piece-4KiB", answer[:2048] + piece + answer[2048+pieceLen:], true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.payload)))
			start := cpuTime()
			for b.Loop() {
				if found := len(p.find(bc.payload)) > 0; found != bc.found {
					b.Fatalf("found %v, want %v", found, bc.found)
				}
			}
			b.ReportMetric(float64((cpuTime()-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}
