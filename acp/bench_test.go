package acp

import (
	"context"
	"io"
	"testing"

	"github.com/coda-acp/coda/engine"
)

// BenchmarkUpdateSink_chunk measures encoding and writing one streamed text
// chunk as a session/update: the hot path of a turn.
func BenchmarkUpdateSink_chunk(b *testing.B) {
	out := newOutput(io.Discard, nil)
	defer out.close()
	k := &updateSink{out: out, sessionID: "s-7f3a"}
	ev := engine.Event{Kind: engine.EventText, Stage: "answer", MessageID: "m-1", Text: "chunk 000123 of the stream, with \"quotes\" "}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := k.Emit(ctx, ev); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "updates/s")
}
