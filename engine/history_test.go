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
