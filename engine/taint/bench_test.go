package taint

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
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

// BenchmarkRead is the one-time cost of taking in a 1 MiB private file,
// and the memory the gate keeps of it.
func BenchmarkRead(b *testing.B) {
	text := privateMiB()
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	var kept uint64
	var probe privateLines
	if probe.add(text, 0); probe.full {
		b.Fatal("the 1 MiB file overflowed the bounds: BenchmarkTaintGate would measure nothing")
	}
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
