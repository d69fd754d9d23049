// Package benchcpu is what the providers' stream benchmarks report beside
// a benchmark's wall time: the CPU time the process spent per op and per
// delta, which the targets of issue 20 speak of and which a loaded
// machine's waits do not inflate. The server's side of a call over HTTP is
// in the same process, and counted for both halves of a benchmark (the
// provider and the relay it is measured against).
package benchcpu

import (
	"testing"
	"time"
)

// A Meter measures one benchmark from Start to Report.
type Meter struct {
	b     *testing.B
	start time.Duration
}

// Start starts measuring b's CPU time.
func Start(b *testing.B) *Meter { return &Meter{b: b, start: processCPU()} }

// Report reports, since Start, the CPU time per op (cpu-ns/op) and, for a
// benchmark that streamed deltas, the wall and CPU time per delta
// (ns/delta, cpu-ns/delta). Where the process's CPU time is not read
// (outside unix), only the wall time is.
func (m *Meter) Report(deltas int) {
	b := m.b
	b.Helper()
	if deltas > 0 {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(deltas), "ns/delta")
	}
	used := processCPU() - m.start
	if used <= 0 || b.N == 0 {
		return
	}
	b.ReportMetric(float64(used.Nanoseconds())/float64(b.N), "cpu-ns/op")
	if deltas > 0 {
		b.ReportMetric(float64(used.Nanoseconds())/float64(deltas), "cpu-ns/delta")
	}
}
