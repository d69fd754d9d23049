package engine_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/tools"
)

// A long session keeps its cached prefix (issue 35, DESIGN §23): over 45
// turns, each reading a file before it answers and kept as acp keeps a
// session's history (engine.KeepHistory after each turn), at least 90 % of
// the turns after the first start their first request with at least 90 %
// of the previous turn's last. The history is cut in chunks once it passes
// engine.MaxHistory, so the prefix breaks once per chunk, not every turn.
func TestPrefix_longSession(t *testing.T) {
	const turns = 45
	for _, api := range prefixAPIs {
		model, calls := api.start(t, func(n int) (string, string) {
			if n%2 == 0 {
				return "read_file", fmt.Sprintf(`{"path":"f%d.txt"}`, n/2)
			}
			return "submit_output", fmt.Sprintf(`{"content":"f%d.txt says what it says."}`, n/2)
		})
		turn := newTurn(t, sessionAgent, "")
		turn.Engine.Tools = tools.Builtin()
		turn.Engine.Models = oneModel{model}
		turn.UserModel = model.Name()
		dir := turn.Workspace.Cwd()
		for i := range turns {
			text := strings.Repeat(fmt.Sprintf("line of f%d.txt, as the file says it\n", i), 20)
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.txt", i)), []byte(text), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		sink := &events{}
		for i := range turns {
			turn.RunID, turn.Prompt = fmt.Sprintf("run-%d", i+1), fmt.Sprintf("What does f%d.txt say?", i)
			res := runTurn(context.Background(), turn, sink)
			if res.Status != engine.StatusAnswered {
				t.Fatalf("%s: turn %d = %s (%v)", api.name, i+1, res.Status, res.Err)
			}
			turn.History = engine.KeepHistory(append(turn.History, sessionExchange(turn.Turn, res)))
		}
		got := calls()
		if len(got) != 2*turns {
			t.Fatalf("%s: the fake served %d calls, want %d", api.name, len(got), 2*turns)
		}
		kept := 0
		for i := 1; i < turns; i++ {
			if prefixShare(got[2*i-1].prompt, got[2*i].prompt) >= 0.90 {
				kept++
			}
		}
		share := float64(kept) / float64(turns-1)
		t.Logf("%-17s %d of %d turns start with ≥ 90 %% of the turn before's last request", api.name, kept, turns-1)
		if share < 0.90 {
			t.Errorf("%s: %d of %d turns (%.0f%%) start with ≥ 90 %% of the turn before's last request; want ≥ 90 %%", api.name, kept, turns-1, 100*share)
		}
	}
}
