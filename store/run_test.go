package store_test

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/coda-acp/coda/store"
)

// A run's record is laid out as DESIGN §9 says, and read back. Its files
// are written when the writer is started (Flush, WriteQueued, a new
// visit), in the order they were queued (a worker's after its parent's); a
// file queued again before it was started is written once, later: a short
// run writes its run.json once, last.
func TestRun_layout(t *testing.T) {
	st := store.New(t.TempDir())
	var mu sync.Mutex
	var order []string
	st.BeforeWrite = func(path string) {
		rel, _ := filepath.Rel(st.Dir(), path)
		mu.Lock()
		order = append(order, filepath.ToSlash(rel))
		mu.Unlock()
	}
	run := st.NewRun(store.RunRecord{RunID: "r1", Agent: "a", Session: "s1", Prompt: "Go."}, nil)
	run.Start()
	v := run.Visit("review", 1)
	if v.RunPath() != "stages/001-review@1" {
		t.Errorf("RunPath = %q", v.RunPath())
	}
	v.WritePrompt(func(w io.Writer) error { _, err := io.WriteString(w, "# System\n"); return err })
	v.WriteText(store.AnswerFile, "Fine.")
	w := run.Sub(store.RunRecord{RunID: "r1/workers/w1", Agent: "a", Prompt: "Slice."}, nil)
	w.Start()
	run.KeepAnswer(w, "The slice.")
	kept, err := run.KeepArtifact("report.md", func(w io.Writer) error { _, err := io.WriteString(w, "# Report\n"); return err })
	if err != nil || kept != "artifacts/report.md" {
		t.Errorf("KeepArtifact = %q, %v", kept, err)
	}
	run.Finish(&store.RunRecord{Status: "answered", FinalOutput: &store.Answer{Content: "Fine."}})
	mu.Lock()
	if len(order) != 0 {
		t.Errorf("%q written before the writer was started", order)
	}
	mu.Unlock()
	run.Flush()

	want := []string{"runs/r1/stages/001-review@1/prompt.md", "runs/r1/stages/001-review@1/answer",
		"runs/r1/workers/w1/run.json", "runs/r1/workers/w1/answer", "runs/r1/run.json"}
	if !slices.Equal(order, want) {
		t.Errorf("written in the order %q, want %q", order, want)
	}
	rr, err := st.ReadRun("r1")
	if err != nil || rr.Status != "answered" || rr.Agent != "a" || rr.Session != "s1" || rr.Prompt != "Go." || rr.Started == "" || rr.Ended == "" || rr.Record().Content != "Fine." {
		t.Errorf("ReadRun = %+v, %v", rr, err)
	}
	sub, err := st.ReadSubRun("r1", "workers/w1")
	if err != nil || sub.RunID != "r1/workers/w1" || sub.Status != "running" {
		t.Errorf("ReadSubRun = %+v, %v", sub, err)
	}
	if rec := sub.Record(); rec.Content != "" || rec.Status != "running" || rec.Flags == nil || rec.Artifacts == nil {
		t.Errorf("the record of a run without an answer = %+v", rec)
	}
	root, err := st.OpenRun("r1")
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if b, err := root.ReadFile(filepath.FromSlash(kept)); err != nil || string(b) != "# Report\n" {
		t.Errorf("the kept artifact holds %q, %v", b, err)
	}
	if ids, err := st.RunIDs(); err != nil || !slices.Equal(ids, []string{"r1"}) {
		t.Errorf("RunIDs = %q, %v", ids, err)
	}
}

// A nil store keeps nothing, and a state directory that cannot be written
// does not stop a run: Warning says so, once.
func TestRun_nothingKept(t *testing.T) {
	var none *store.Store
	run := none.NewRun(store.RunRecord{RunID: "r1"}, nil)
	run.Start()
	run.Visit("a", 1).WriteText(store.AnswerFile, "x")
	run.Finish(&store.RunRecord{Status: "answered"})
	run.Flush()
	if run.Dir() != "" || run.Warning() != "" {
		t.Errorf("a nil store: Dir %q, Warning %q", run.Dir(), run.Warning())
	}
	if ids, err := none.RunIDs(); ids != nil || err != nil {
		t.Errorf("RunIDs of a nil store = %q, %v", ids, err)
	}

	file := filepath.Join(t.TempDir(), "state")
	if err := os.WriteFile(file, []byte("not a directory"), 0o644); err != nil {
		t.Fatal(err)
	}
	run = store.New(file).NewRun(store.RunRecord{RunID: "r2"}, nil)
	run.Start()
	run.Finish(&store.RunRecord{Status: "answered"})
	run.Flush()
	if w := run.Warning(); !strings.Contains(w, "the run record could not be written") || !strings.Contains(w, "coda result r2") {
		t.Errorf("Warning = %q", w)
	}
}
