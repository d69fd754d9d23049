package sse

import "strings"

// Text gathers the streamed text of a reply. Its pieces are copied into
// blocks that are filled in place and never moved, and joined once, exactly
// sized, when the reply is whole: a strings.Builder instead copies the text
// each time it outgrows its buffer, holding it twice while it does and up to
// twice its size after. The zero value is empty and ready to use.
type Text struct {
	joined string   // what String returned last
	blocks [][]byte // what came since, in order
	n      int      // bytes in all, to size the join
}

// Block sizes: small for short replies, doubling up to textBlockMax, the
// most a Text ever holds unused.
const (
	textBlockMin = 256
	textBlockMax = 64 << 10
)

// Add appends s.
func (t *Text) Add(s string) {
	t.n += len(s)
	for len(s) > 0 {
		last := len(t.blocks) - 1
		if last < 0 || len(t.blocks[last]) == cap(t.blocks[last]) {
			size := textBlockMin
			if last >= 0 {
				size = min(2*cap(t.blocks[last]), textBlockMax)
			}
			t.blocks = append(t.blocks, make([]byte, 0, size))
			last++
		}
		b := &t.blocks[last]
		k := min(len(s), cap(*b)-len(*b))
		*b = append(*b, s[:k]...)
		s = s[k:]
	}
}

// String returns the text, joining what came since the last call into one
// string of exactly its size and letting the blocks go.
func (t *Text) String() string {
	if len(t.blocks) == 0 {
		return t.joined
	}
	var b strings.Builder
	b.Grow(t.n)
	b.WriteString(t.joined)
	for i, blk := range t.blocks {
		b.Write(blk)
		t.blocks[i] = nil
	}
	t.blocks = nil
	t.joined = b.String()
	return t.joined
}
