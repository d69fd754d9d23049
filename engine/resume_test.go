package engine_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/blueprint"
	"github.com/coda-acp/coda/engine/provider/script"
)

// A run that failed in its second stage (its model gave out) is taken up
// again from its checkpoint (which counts the model calls spent, for the
// run's budget): the first stage is not run again, what it said reaches
// the second stage's preamble as before, the record's visits are numbered
// after those it holds, and run.json lists the resume.
func TestRun_resume(t *testing.T) {
	turn := newTurn(t, twoStages, `
[[turn]]
text = "EXPLORED-FIRST"
usage = { input = 100, output = 10 }
[[turn.tool_calls]]
name = "transition"
arguments = { to = "report" }
`)
	turn.Checkpoints = true
	res := runTurn(t.Context(), turn, &events{})
	if res.Status != engine.StatusFailed {
		t.Fatalf("the first run: %s, %v; want failed (its script ran out)", res.Status, res.Err)
	}
	cp, err := engine.ReadCheckpoint(turn.Store, turn.RunID)
	if err != nil || cp == nil {
		t.Fatalf("ReadCheckpoint = %+v, %v", cp, err)
	}
	if cp.Next != "report" || len(cp.Done) != 1 || cp.Done[0].Stage != "explore" || cp.Calls != 1 || cp.Blueprint != engine.BlueprintHash(turn.Agent) {
		t.Errorf("the checkpoint: %+v", cp)
	}
	rr, err := turn.Store.ReadRun(turn.RunID)
	if err != nil {
		t.Fatal(err)
	}
	visits, err := turn.Store.Visits(turn.RunID)
	if err != nil {
		t.Fatal(err)
	}

	// The resumed run's model makes one call, the second stage's.
	sc, err := script.Parse([]byte(`
[[turn]]
expect = "EXPLORED-FIRST"
usage = { input = 200, output = 20 }
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "reported" }
`), "model")
	if err != nil {
		t.Fatal(err)
	}
	again := *turn.Turn
	again.Resume = &engine.Resume{Checkpoint: cp, Record: rr, Visits: visits}
	e := *turn.Engine
	e.Models = oneModel{script.New("script:test", sc)}
	res = e.Run(t.Context(), &again, &events{})
	res.Recorded()
	if res.Status != engine.StatusAnswered || res.Answer == nil || res.Answer.Content != "reported" {
		t.Fatalf("the resumed run: %s, %+v, %v", res.Status, res.Answer, res.Err)
	}
	rr, err = turn.Store.ReadRun(turn.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if rr.Status != engine.StatusAnswered || len(rr.Resumes) != 1 || rr.Resumes[0].Stage != "report" || rr.Started != again.Resume.Record.Started {
		t.Errorf("run.json after the resume: %+v", rr)
	}
	// Its usage counts the calls before the resume too.
	if u := rr.Usage; u == nil || u.Calls != 2 || u.InputTokens != 300 || u.OutputTokens != 30 {
		t.Errorf("run.json's usage after the resume: %+v, want 2 calls, 300 in, 30 out", u)
	}
	dirs, _ := filepath.Glob(filepath.Join(turn.Store.RunDir(turn.RunID), "stages", "*"))
	var names []string
	for _, d := range dirs {
		names = append(names, filepath.Base(d))
	}
	want := []string{"001-explore@1", "002-report@1", "003-report@1"}
	if len(names) != len(want) || names[0] != want[0] || names[1] != want[1] || names[2] != want[2] {
		t.Errorf("the record's visits: %v, want %v", names, want)
	}
	if _, err := os.Stat(filepath.Join(turn.Store.RunDir(turn.RunID), "stages", "003-report@1", "answer")); err != nil {
		t.Error(err)
	}
}

// A blueprint's hash is its content's, not where it was read from.
func TestBlueprintHash(t *testing.T) {
	a, err := blueprint.Parse([]byte(twoStages), "a.toml")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := blueprint.Parse([]byte(twoStages), "elsewhere/b.toml")
	c, _ := blueprint.Parse([]byte(twoStages+"description = \"x\"\n"), "a.toml")
	if engine.BlueprintHash(a) == "" || engine.BlueprintHash(a) != engine.BlueprintHash(b) {
		t.Error("one content, two hashes")
	}
	if engine.BlueprintHash(a) == engine.BlueprintHash(c) {
		t.Error("a changed blueprint keeps its hash")
	}
}
