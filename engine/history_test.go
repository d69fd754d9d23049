package engine_test

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/coda-acp/coda/engine"
)

// KeepHistory keeps at most the latest 20 exchanges, cutting 10 at a time
// (25 keep the latest 15), each clipped to 8 KiB at a
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
	if len(kept) != 15 || kept[0].Prompt != "q10" {
		t.Fatalf("kept %d exchanges from %q, want the latest 15 from q10", len(kept), kept[0].Prompt)
	}
	long := kept[14].Answer
	if len(long) > 8<<10 || !utf8.ValidString(long) || !strings.HasSuffix(long, "[… 31878 more bytes, cut here; the whole text is in the run record]") {
		t.Errorf("the long answer was kept as %d bytes ending %q", len(long), long[max(0, len(long)-80):])
	}
	if kept[13].Prompt != h[23].Prompt {
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
	if kept[0].NotShown != 10 || kept[0].FirstNotShown != "q0, the first line" {
		t.Fatalf("kept[0] counts %d not shown, the first %q; want 10, \"q0, the first line\"", kept[0].NotShown, kept[0].FirstNotShown)
	}
	for i := 1; i < len(kept); i++ {
		if kept[i].NotShown != 0 {
			t.Errorf("kept[%d] counts %d not shown", i, kept[i].NotShown)
		}
	}
	for i := 25; i < 31; i++ { // 21 kept, 31 in all: the next chunk goes
		kept = append(kept, engine.Exchange{Prompt: fmt.Sprintf("q%d,", i)})
	}
	kept = engine.KeepHistory(kept)
	if kept[0].NotShown != 20 || kept[0].FirstNotShown != "q0, the first line" || !strings.Contains(kept[0].Prompt, "q20,") || len(kept) != 11 {
		t.Errorf("kept again: %d not shown, the first %q, %d kept from %q; want 20, q0, 11 from q20", kept[0].NotShown, kept[0].FirstNotShown, len(kept), kept[0].Prompt)
	}
	if short := engine.KeepHistory(h[:3]); short[0].NotShown != 0 || short[0].FirstNotShown != "" {
		t.Errorf("a short history counts %d cut", short[0].NotShown)
	}
}

// What KeepHistory keeps depends only on how many turns the session has
// had: keeping after every turn (a live session), after every few (a
// session loaded from its file) or once at the end keeps the same
// exchanges, and the cuts come in chunks, so the kept history loses its
// oldest turns once every engine.HistoryChunk turns, not every turn.
func TestKeepHistory_sameHoweverOften(t *testing.T) {
	var all, live []engine.Exchange
	cuts := 0
	for i := range 60 {
		ex := engine.Exchange{Prompt: fmt.Sprintf("q%d", i), Answer: "a"}
		all = append(all, ex)
		before := len(live)
		live = engine.KeepHistory(append(live, ex))
		if len(live) <= before {
			cuts++
		}
		if diff := cmp.Diff(live, engine.KeepHistory(all)); diff != "" {
			t.Fatalf("after %d turns, kept turn by turn differs from kept at once (-turn by turn +at once):\n%s", i+1, diff)
		}
		if len(live) > engine.MaxHistory || live[0].NotShown+len(live) != i+1 {
			t.Fatalf("after %d turns: %d kept, %d not shown", i+1, len(live), live[0].NotShown)
		}
	}
	if want := (60 - engine.MaxHistory + engine.HistoryChunk - 1) / engine.HistoryChunk; cuts != want {
		t.Errorf("60 turns cut the history %d times, want %d (once per chunk)", cuts, want)
	}
}
