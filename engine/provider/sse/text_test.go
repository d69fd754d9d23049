package sse

import (
	"runtime"
	"strings"
	"testing"
)

func TestText(t *testing.T) {
	var tx Text
	if tx.String() != "" {
		t.Fatalf("the zero Text is %q", tx.String())
	}
	var want strings.Builder
	for i := range 5000 {
		piece := strings.Repeat(string(rune('a'+i%26)), i%97) + "é"
		tx.Add(piece)
		want.WriteString(piece)
		if i == 2500 && tx.String() != want.String() {
			t.Fatal("String midway differs")
		}
	}
	tx.Add("")
	if got := tx.String(); got != want.String() {
		t.Fatalf("Text holds %d bytes, want %d", len(got), want.Len())
	}
	if got := tx.String(); got != want.String() {
		t.Fatal("a second String differs")
	}
	// The joined text is exactly sized, and no block is kept beside it.
	if len(tx.blocks) != 0 {
		t.Errorf("%d blocks kept after String", len(tx.blocks))
	}
}

// Streaming text costs about twice its size in allocations (the blocks,
// then the exact join), where a strings.Builder allocates about five times
// it as it grows.
func TestText_bytesAllocated(t *testing.T) {
	const piece = "chunk 000000 of the streamed reply text.. "
	const n = 50000
	size := uint64(len(piece) * n)
	allocated := func(add func(string), join func() string) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range n {
			add(piece)
		}
		if len(join()) != int(size) {
			t.Fatal("wrong length")
		}
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	var tx Text
	text := allocated(tx.Add, tx.String)
	var sb strings.Builder
	builder := allocated(func(s string) { sb.WriteString(s) }, sb.String)
	if text > 2*size+textBlockMax+64<<10 {
		t.Errorf("Text allocated %d bytes for %d of text (a strings.Builder: %d)", text, size, builder)
	}
}
