package engine_test

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/coda-acp/coda/engine"
)

// KeepHistory keeps the latest 20 exchanges, each clipped to 8 KiB at a
// character boundary with a note of what was cut; keeping what it kept
// changes nothing, so a session that stores only this shows its turns
// exactly what the whole history would have shown them.
func TestKeepHistory(t *testing.T) {
	var h []engine.Exchange
	for i := range 25 {
		h = append(h, engine.Exchange{Prompt: fmt.Sprintf("q%d", i), Answer: "a"})
	}
	h[24].Answer = strings.Repeat("é", 20000) // 40,000 bytes
	h[23].Prompt = strings.Repeat("x", 8<<10) // exactly the limit: kept whole
	kept := engine.KeepHistory(h)
	if len(kept) != 20 || kept[0].Prompt != "q5" {
		t.Fatalf("kept %d exchanges from %q, want the latest 20 from q5", len(kept), kept[0].Prompt)
	}
	long := kept[19].Answer
	if len(long) > 8<<10 || !utf8.ValidString(long) || !strings.HasSuffix(long, "[… 31878 more bytes, cut here; the whole text is in the run record]") {
		t.Errorf("the long answer was kept as %d bytes ending %q", len(long), long[max(0, len(long)-80):])
	}
	if kept[18].Prompt != h[23].Prompt {
		t.Errorf("a prompt of exactly 8 KiB was clipped")
	}
	if diff := cmp.Diff(kept, engine.KeepHistory(kept)); diff != "" {
		t.Errorf("keeping the kept history changed it (-once +twice):\n%s", diff)
	}
}

// The exchanges KeepHistory cuts are counted on the first it keeps, with
// the first line of the first cut prompt, and keeping again (a session
// that stores only the kept history, and adds a turn) counts on.
func TestKeepHistory_countsCuts(t *testing.T) {
	var h []engine.Exchange
	for i := range 25 {
		h = append(h, engine.Exchange{Prompt: fmt.Sprintf("\n  q%d, the first line\nthe second", i), Answer: "a"})
	}
	kept := engine.KeepHistory(h)
	if kept[0].NotShown != 5 || kept[0].FirstNotShown != "q0, the first line" {
		t.Fatalf("kept[0] counts %d not shown, the first %q; want 5, \"q0, the first line\"", kept[0].NotShown, kept[0].FirstNotShown)
	}
	for i := 1; i < len(kept); i++ {
		if kept[i].NotShown != 0 {
			t.Errorf("kept[%d] counts %d not shown", i, kept[i].NotShown)
		}
	}
	kept = engine.KeepHistory(append(kept, engine.Exchange{Prompt: "q25"}, engine.Exchange{Prompt: "q26"}))
	if kept[0].NotShown != 7 || kept[0].FirstNotShown != "q0, the first line" || !strings.Contains(kept[0].Prompt, "q7,") {
		t.Errorf("kept again: %d not shown, the first %q, from %q; want 7, q0, from q7", kept[0].NotShown, kept[0].FirstNotShown, kept[0].Prompt)
	}
	if short := engine.KeepHistory(h[:3]); short[0].NotShown != 0 || short[0].FirstNotShown != "" {
		t.Errorf("a short history counts %d cut", short[0].NotShown)
	}
}
