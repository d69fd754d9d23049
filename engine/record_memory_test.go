package engine

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/store"
)

// The record keeps a long reply's clip as a piece of the reply, not a copy
// beside it (issue 32, case 13): recording a call whose text and thinking
// are 4 MiB each, and its last response, allocates a few KiB, where two
// clipped copies and a third for last_response.md took over 3 MiB. What is
// written is the clip, noted.
func TestVisitRecord_clipNotCopied(t *testing.T) {
	st := store.New(t.TempDir())
	run := st.NewRun(store.RunRecord{RunID: "r-1"}, nil)
	vr := newVisitRecord(run, "answer", 1, func(s string) string { return s })
	text := strings.Repeat("reply text line of a long reply\n", 4<<20/32)
	thinking := strings.Repeat("thought ", 4<<20/8)
	req := &llm.Request{System: "s", Messages: []llm.Message{{Role: llm.RoleUser, Text: "go"}}}
	resp := &llm.Response{Text: text, Thinking: thinking, StopReason: llm.StopEndTurn}
	v := &stageVisit{lastText: text}
	vr.call("script:x", req, resp, nil) // the first call writes prompt.md: measured apart
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	vr.call("script:x", req, resp, nil)
	vr.writeTexts(v)
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 64<<10 {
		t.Errorf("recording a call of 8 MiB of text allocated %d bytes, want at most 64 KiB", n)
	}
	vr.finish(v, nil)
	run.Flush()
	b, err := os.ReadFile(filepath.Join(vr.Dir(), store.LastResponseFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > maxKeptReply || !strings.HasPrefix(string(b), text[:1000]) || !strings.Contains(string(b), "more bytes of this reply were not kept]") {
		t.Errorf("last response kept: %d bytes, %.80q … %q", len(b), b, b[max(len(b)-80, 0):])
	}
	b, _ = os.ReadFile(filepath.Join(vr.Dir(), "response.md"))
	if len(b) > 4*maxKeptReply+4<<10 || strings.Count(string(b), "were not kept]") != 4 {
		t.Errorf("response.md holds %d bytes, %d clips", len(b), strings.Count(string(b), "were not kept]"))
	}
}

// A secret across the record's clip is masked whole: the head is masked
// with a margin before it is cut.
func TestKeptReply_masksAcrossTheCut(t *testing.T) {
	const secret = "sk-live-0123456789abcdefghij"
	s := strings.Repeat("a", maxKeptReply-100) + secret + strings.Repeat("b", maxKeptReply)
	mask := func(s string) string { return strings.ReplaceAll(s, secret, "[masked]") }
	got := strings.Join(keptReply(s, mask), "")
	if strings.Contains(got, secret[:12]) || len(got) > maxKeptReply {
		t.Errorf("kept %d bytes, secret's head shown: %v", len(got), strings.Contains(got, secret[:12]))
	}
}
