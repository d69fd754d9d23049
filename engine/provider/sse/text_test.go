package sse

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
	text := allocated(func(s string) { tx.Add(s) }, tx.String)
	var sb strings.Builder
	builder := allocated(func(s string) { sb.WriteString(s) }, sb.String)
	if text > 2*size+textBlockMax+64<<10 {
		t.Errorf("Text allocated %d bytes for %d of text (a strings.Builder: %d)", text, size, builder)
	}
}

// longText adds n pieces of a 42-byte chunk, from the from-th on, to tx
// (if not nil), and returns the text they make.
func longText(tx *Text, from, n int) string {
	var want strings.Builder
	for i := from; i < from+n; i++ {
		piece := fmt.Sprintf("chunk %06d of the streamed reply texté. ", i)
		if tx != nil {
			tx.Add(piece)
		} else {
			want.WriteString(piece)
		}
	}
	return want.String()
}

// A long reply is held once: past textKeep its pieces go to an unlinked
// file, so before the join the heap holds about textKeep of it, and the
// join gives the text back whole, however often String is called between
// pieces. Nothing is left in the temporary directory.
func TestText_spillsPastKeep(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	tx := Text{Max: 8 << 20}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	longText(&tx, 0, 100_000) // 4.3 MB
	runtime.GC()
	runtime.ReadMemStats(&after)
	want := longText(nil, 0, 100_000)
	if tx.spill == nil {
		t.Fatal("a 4 MB text did not spill")
	}
	if held := int64(after.HeapAlloc) - int64(before.HeapAlloc); held > textKeep+4*textBlockMax {
		t.Errorf("the heap holds %d bytes of a %d-byte text before the join, want at most about %d", held, len(want), textKeep)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Errorf("the spill file is in the temporary directory: %v", entries)
	}
	if got := tx.String(); got != want || tx.Err() != nil {
		t.Fatalf("String gave %d bytes (err %v), want %d", len(got), tx.Err(), len(want))
	}
	if tx.spill != nil || len(tx.blocks) != 0 {
		t.Error("the spill file or blocks kept after String")
	}
	// More after a join: joined, then blocks, then a new spill.
	longText(&tx, 100_000, 20_000)
	want += longText(nil, 100_000, 20_000)
	if got := tx.String(); got != want {
		t.Fatalf("after a second join: %d bytes, want %d", len(got), len(want))
	}
}

// Where no temporary file can be made, a long text stays in memory.
func TestText_noSpillFile(t *testing.T) {
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "missing"))
	var tx Text
	longText(&tx, 0, 20_000)
	want := longText(nil, 0, 20_000)
	if tx.spill != nil || !tx.noSpill {
		t.Fatal("spilled with no temporary directory")
	}
	if got := tx.String(); got != want || tx.Err() != nil {
		t.Fatalf("String gave %d bytes (err %v), want %d", len(got), tx.Err(), len(want))
	}
}

// A write to the spill file that fails keeps that piece, and all that
// follows, in memory, after what the file already holds.
func TestText_spillWriteFails(t *testing.T) {
	var tx Text
	longText(&tx, 0, 10_000) // past textKeep: spilling
	want := longText(nil, 0, 20_000)
	if tx.spill == nil || tx.spilled == 0 {
		t.Fatal("no spill to break")
	}
	readOnly, err := os.Open(fmt.Sprintf("/proc/self/fd/%d", tx.spill.Fd()))
	if err != nil {
		t.Skip("needs /proc/self/fd to reopen the unlinked file read-only:", err)
	}
	tx.spill.Close()
	tx.spill = readOnly
	longText(&tx, 10_000, 10_000)
	if !tx.noSpill || len(tx.tail) == 0 {
		t.Fatal("the failed write did not turn spilling off")
	}
	if got := tx.String(); got != want || tx.Err() != nil {
		t.Fatalf("String gave %d bytes (err %v), want %d", len(got), tx.Err(), len(want))
	}
}

// When the spill file cannot be read back, String gives what it has and
// Err says the text is not whole, so the provider does not hand on a reply
// with a piece missing as if it were the reply.
func TestText_readBackFails(t *testing.T) {
	var tx Text
	longText(&tx, 0, 10_000) // past textKeep: spilling
	want := longText(nil, 0, 10_000)
	if tx.spill == nil || tx.spilled == 0 {
		t.Fatal("no spill to break")
	}
	tx.spill.Close()
	got := tx.String()
	if tx.Err() == nil {
		t.Fatalf("String gave %d of %d bytes and no error", len(got), len(want))
	}
	if len(got) >= len(want) || tx.spill != nil {
		t.Errorf("String gave %d of %d bytes; spill kept: %v", len(got), len(want), tx.spill != nil)
	}
}

// Discard closes the spill file at once and empties the text.
func TestText_discard(t *testing.T) {
	var tx Text
	longText(&tx, 0, 10_000)
	f := tx.spill
	if f == nil {
		t.Fatal("no spill")
	}
	tx.Discard()
	if _, err := f.Stat(); err == nil {
		t.Error("the spill file is still open after Discard")
	}
	if tx.String() != "" {
		t.Error("a discarded text is not empty")
	}
}

// A Text holds at most Max bytes, memory and spill file together: the
// piece that would pass it is refused with an *OverBudget, and nothing
// after it is written.
func TestText_max(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	const max = 1 << 20
	tx := Text{Max: max, What: "thinking"}
	piece := strings.Repeat("x", 1000)
	var err error
	added := 0
	for range 10 * max / len(piece) {
		if err = tx.Add(piece); err != nil {
			break
		}
		added += len(piece)
	}
	var over *OverBudget
	if !errors.As(err, &over) || !errors.Is(err, ErrOverBudget) || over.Max != max || over.What != "thinking" {
		t.Fatalf("Add past Max: %v", err)
	}
	if added > max || added < max-len(piece) {
		t.Errorf("%d bytes added before the refusal, want about %d", added, max)
	}
	if tx.spill == nil || tx.spilled > max {
		t.Errorf("spill file of %d bytes for a Text of at most %d", tx.spilled, max)
	}
	if err := tx.Add(piece); err == nil {
		t.Error("a second Add past Max was taken")
	}
	if got := tx.String(); len(got) != added {
		t.Errorf("String gave %d bytes, want the %d added", len(got), added)
	}
	// The zero Text counts against the default.
	var zero Text
	if err := zero.Add(strings.Repeat("y", DefaultMaxText+1)); err == nil {
		t.Error("the zero Text took more than DefaultMaxText")
	}
	zero.Discard()
}
