package engine_test

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/coda-acp/coda/engine"
)

// A run's record is written in the background: the turn's first update
// goes out while no file of the record has been written (the writer is
// held until then), and once it is recorded every file is, in the order
// the run queued them: the first visit's, then run.json naming the stage
// the run entered (the second visit queued it again, and started the
// writer on what was queued), then the second visit's, and run.json last.
func TestRun_recordsInTheBackground(t *testing.T) {
	turn := newTurn(t, twoStages, `
[[turn]]
text = "Looked around."
[[turn.tool_calls]]
name = "transition"
arguments = { to = "report" }

[[turn]]
text = "Done."
`)
	firstUpdate := make(chan struct{})
	var once sync.Once
	var mu sync.Mutex
	var wrote []string
	turn.Store.BeforeWrite = func(path string) {
		select {
		case <-firstUpdate:
		case <-time.After(time.Minute): // only a real hang gets here
			t.Error("the run's first update waited for its record")
		}
		rel, _ := filepath.Rel(turn.Store.RunDir(turn.RunID), path)
		mu.Lock()
		wrote = append(wrote, filepath.ToSlash(rel))
		mu.Unlock()
	}
	sink := &events{on: func(engine.Event) { once.Do(func() { close(firstUpdate) }) }}
	res := runTurn(t.Context(), turn, sink)
	ended(t, res, engine.StatusAnswered, "end_turn")
	mu.Lock()
	defer mu.Unlock()
	want := []string{
		"stages/001-explore@1/prompt.md", "stages/001-explore@1/response.md", "stages/001-explore@1/status.json", "stages/001-explore@1/last_response",
		"run.json",
		"stages/002-report@1/prompt.md", "stages/002-report@1/response.md", "stages/002-report@1/status.json", "stages/002-report@1/last_response", "stages/002-report@1/answer",
		"run.json",
	}
	if strings.Join(wrote, "\n") != strings.Join(want, "\n") {
		t.Errorf("files written, in order:\n%s\nwant:\n%s", strings.Join(wrote, "\n"), strings.Join(want, "\n"))
	}
	rr, err := turn.Store.ReadRun(turn.RunID)
	if err != nil || rr.Status != res.Status || rr.Ended == "" {
		t.Errorf("run.json once recorded: %+v (%v); want it final", rr, err)
	}
	for _, f := range want {
		if _, err := os.Stat(recordPath(turn, f)); err != nil {
			t.Errorf("once recorded: %v", err)
		}
	}
}

// The record is finished after the answer, not on its way: when Run
// returns, the last visit's files and the final run.json are queued, not
// written (only the earlier visit's, started when the next began, may be);
// Recorded writes them, and no file of the record is written after it
// returns, nor any goroutine of the writer left (synctest.Test fails on one
// left blocked; synctest.Wait lets one still running finish its file).
func TestRun_recordFinishedAfterTheAnswer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		turn := newTurn(t, twoStages, `
[[turn]]
text = "Looked around."
[[turn.tool_calls]]
name = "transition"
arguments = { to = "report" }

[[turn]]
text = "Done."
`)
		var mu sync.Mutex
		var wrote []string
		var recorded atomic.Bool
		turn.Store.BeforeWrite = func(path string) {
			if recorded.Load() {
				t.Errorf("%s was written after Recorded returned", path)
			}
			rel, _ := filepath.Rel(turn.Store.RunDir(turn.RunID), path)
			mu.Lock()
			wrote = append(wrote, filepath.ToSlash(rel))
			mu.Unlock()
		}
		res := turn.Engine.Run(t.Context(), turn.Turn, &events{})
		synctest.Wait() // the first visit's files, started when the second began
		mu.Lock()
		runs := 0
		for _, f := range wrote {
			if f == "run.json" {
				runs++
			}
			if strings.HasPrefix(f, "stages/002-report@1/") || runs > 1 {
				t.Errorf("%s was written before the answer's caller asked (Recorded)", f)
			}
		}
		mu.Unlock()
		res.Recorded()
		recorded.Store(true)
		ended(t, res, engine.StatusAnswered, "end_turn")
		if rr, err := turn.Store.ReadRun(turn.RunID); err != nil || rr.Status != engine.StatusAnswered {
			t.Errorf("run.json once Recorded returned: %+v, %v", rr, err)
		}
		synctest.Wait()
	})
}

// Keeping a record adds nothing to a turn's way to its first update: not
// a file, not a directory, not even the record's path (each would show as
// heap objects allocated before it; BenchmarkRun_firstUpdate times it).
func TestRun_recordsAddNothingBeforeFirstUpdate(t *testing.T) {
	allocs := func(records bool) uint64 {
		least := uint64(math.MaxUint64)
		for range 5 { // the least of a few: a stray allocation elsewhere only adds
			turn := newTurn(t, defaultAgent, "[[turn]]\ntext = \"Done.\"\n")
			if !records {
				turn.Store = nil
			}
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			before, n := ms.Mallocs, uint64(0)
			runTurn(t.Context(), turn, engine.SinkFunc(func(context.Context, engine.Event) error {
				if n == 0 {
					runtime.ReadMemStats(&ms)
					n = ms.Mallocs - before
				}
				return nil
			}))
			least = min(least, n)
		}
		return least
	}
	if on, off := allocs(true), allocs(false); on > off {
		t.Errorf("before its first update a turn allocated %d heap objects with its record, %d without", on, off)
	}
}

// A stage's prompt.md names the session's earlier turns by their run ids
// instead of writing them out again; one without a run id (a session
// saved before run ids were kept) is written out as before. The model is
// still sent them all.
func TestRun_promptNamesEarlierTurns(t *testing.T) {
	turn := newTurn(t, defaultAgent, "")
	rec := &recorder{}
	turn.Models, turn.UserModel = models{"rec": rec}, "rec"
	turn.History = []engine.Exchange{
		{Prompt: "the first question, a long one", Answer: "the first answer", RunID: "r-1"},
		{Prompt: "the second question", Answer: "the second answer"},
		{Prompt: "the third question", Answer: "the third answer", RunID: "r-3"},
	}
	runTurn(t.Context(), turn, &events{})
	b, err := os.ReadFile(recordPath(turn, "stages/001-answer@1/prompt.md"))
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	for _, want := range []string{"\n[earlier turn 1: run r-1]\n", "\nthe second question\n", "\nthe second answer\n", "\n[earlier turn 3: run r-3]\n", "\n## The task\nGo.\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("prompt.md lacks %q:\n%s", want, got)
		}
	}
	for _, never := range []string{"the first question", "the first answer", "the third question", "the third answer"} {
		if strings.Contains(got, never) {
			t.Errorf("prompt.md writes out %q, a turn it should name by run id:\n%s", never, got)
		}
	}
	if len(rec.reqs) == 0 || len(rec.reqs[0].Messages) != 1 || !strings.Contains(rec.reqs[0].Messages[0].Text, "the first question, a long one") || !strings.Contains(rec.reqs[0].Messages[0].Text, "the third answer") {
		t.Errorf("the model was sent %+v, want every earlier turn", rec.reqs)
	}
}

// A file of the record that fails inside coda (a panic on the writer's
// goroutine) does not end coda: the run ends as usual and says, once, that
// its record could not be written.
func TestRun_recordWriterPanic(t *testing.T) {
	turn := newTurn(t, defaultAgent, `
[[turn]]
text = "Done."
`)
	turn.Store.BeforeWrite = func(path string) {
		if filepath.Base(path) == "prompt.md" {
			panic("a bad file")
		}
	}
	res := runTurn(t.Context(), turn, &events{})
	ended(t, res, engine.StatusAnswered, "end_turn")
	n := 0
	for _, w := range res.Warnings {
		if strings.Contains(w, "the run record could not be written") && strings.Contains(w, "a bad file") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("warnings %q: want the record's failure said once", res.Warnings)
	}
}
