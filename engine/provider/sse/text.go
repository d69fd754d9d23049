package sse

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
)

// Text gathers the streamed text of a reply. Its pieces are copied into
// blocks that are filled in place and never moved, and joined once, exactly
// sized, when the reply is whole: a strings.Builder instead copies the text
// each time it outgrows its buffer, holding it twice while it does and up to
// twice its size after. The zero value is empty and ready to use.
//
// A long reply would still be held twice for the moment of the join, its
// blocks and the joined string. So past its first textKeep bytes a Text
// writes the pieces to an unlinked temporary file, through one block, and
// the join reads them back: a reply of any length is held once, plus
// textKeep. Where no such file can be had (Windows, which cannot unlink an
// open file; a full disk), the pieces stay in blocks as before.
//
// A Text holds at most Max bytes (DefaultMaxText when 0), in memory and in
// its file together: Add refuses the piece that would pass it, so the file
// too is bounded by the reply's Budget.
type Text struct {
	Max  int    // the most it holds; 0 means DefaultMaxText
	What string // what it holds, for OverBudget: "visible text" when ""

	joined string   // what String returned last
	blocks [][]byte // what came since, in order, before spill
	n      int      // bytes in all, to size the join

	spill   *os.File // what came after blocks, when it did not fit them
	spilled int64    // bytes written to spill
	pending []byte   // bytes on their way to spill
	tail    [][]byte // what came after spill, once it failed
	noSpill bool     // spilling failed or is not possible here
	err     error    // reading spill back failed
}

// Block sizes: small for short replies, doubling up to textBlockMax, the
// most a Text ever holds unused. textKeep is how much of a reply a Text
// keeps in memory before it spills: the answer cap, so that an answer
// taken from a reply never touches the disk.
const (
	textBlockMin = 256
	textBlockMax = 64 << 10
	textKeep     = 256 << 10
)

// Add appends s, or fails with an *OverBudget, adding nothing, when s
// would take the text past Max.
func (t *Text) Add(s string) error {
	max := t.Max
	if max <= 0 {
		max = DefaultMaxText
	}
	if len(s) > max-t.n {
		what := t.What
		if what == "" {
			what = "visible text"
		}
		return &OverBudget{What: what, Max: max}
	}
	t.n += len(s)
	if t.spill == nil && !t.noSpill && t.n-len(t.joined) > textKeep {
		t.startSpill()
	}
	if t.spill == nil {
		t.blocks = addBlocks(t.blocks, s)
		return nil
	}
	for len(s) > 0 && !t.noSpill { // once a write failed, the rest stays in tail
		if t.pending == nil {
			t.pending = make([]byte, 0, textBlockMax)
		}
		k := min(len(s), cap(t.pending)-len(t.pending))
		t.pending = append(t.pending, s[:k]...)
		s = s[k:]
		if len(t.pending) == cap(t.pending) {
			t.flush()
		}
	}
	t.tail = addBlocks(t.tail, s)
	return nil
}

// addBlocks appends s to blocks, filling the last block before it adds
// another.
func addBlocks(blocks [][]byte, s string) [][]byte {
	for len(s) > 0 {
		last := len(blocks) - 1
		if last < 0 || len(blocks[last]) == cap(blocks[last]) {
			size := textBlockMin
			if last >= 0 {
				size = min(2*cap(blocks[last]), textBlockMax)
			}
			blocks = append(blocks, make([]byte, 0, size))
			last++
		}
		b := &blocks[last]
		k := min(len(s), cap(*b)-len(*b))
		*b = append(*b, s[:k]...)
		s = s[k:]
	}
	return blocks
}

// startSpill opens the file that what comes next goes to, unlinked at once
// so that nothing is left behind whatever happens to the process.
func (t *Text) startSpill() {
	if runtime.GOOS == "windows" {
		t.noSpill = true
		return
	}
	f, err := os.CreateTemp("", "coda-reply-*")
	if err == nil {
		err = os.Remove(f.Name())
		if err != nil {
			f.Close()
		}
	}
	if err != nil {
		t.noSpill = true
		return
	}
	t.spill = f
}

// flush writes the pending bytes to the spill file; if that fails they,
// and everything after them, stay in memory.
func (t *Text) flush() {
	if len(t.pending) == 0 {
		return
	}
	if _, err := t.spill.WriteAt(t.pending, t.spilled); err != nil {
		t.noSpill = true
		t.tail = append(t.tail, t.pending)
		t.pending = nil
		return
	}
	t.spilled += int64(len(t.pending))
	t.pending = t.pending[:0]
}

// String returns the text, joining what came since the last call into one
// string of exactly its size and letting the blocks and the spill file go.
// If the spill cannot be read back, String returns what it has and Err
// says why.
func (t *Text) String() string {
	if len(t.blocks) == 0 && t.spill == nil {
		return t.joined
	}
	if t.spill != nil && !t.noSpill {
		t.flush()
	}
	var b strings.Builder
	b.Grow(t.n)
	b.WriteString(t.joined)
	for i, blk := range t.blocks {
		b.Write(blk)
		t.blocks[i] = nil
	}
	t.blocks = nil
	if t.spill != nil {
		buf := t.pending[:cap(t.pending)]
		if len(buf) == 0 {
			buf = make([]byte, textBlockMax)
		}
		if _, err := io.CopyBuffer(&b, io.NewSectionReader(t.spill, 0, t.spilled), buf); err != nil && t.err == nil {
			t.err = fmt.Errorf("reading back the reply's text: %w", err)
		}
		t.spill.Close()
		t.spill, t.spilled, t.pending = nil, 0, nil
		for _, blk := range t.tail {
			b.Write(blk)
		}
		t.tail, t.noSpill = nil, false
	}
	t.joined = b.String()
	t.n = len(t.joined)
	return t.joined
}

// Discard lets the text go, its spill file closed at once: a reply that
// failed is dropped without String, and an unlinked file as large as it
// would stay open until a collection found it.
func (t *Text) Discard() {
	if t.spill != nil {
		t.spill.Close()
	}
	*t = Text{Max: t.Max, What: t.What}
}

// Err reports a failure to read back spilled text, which String left out.
func (t *Text) Err() error { return t.err }
