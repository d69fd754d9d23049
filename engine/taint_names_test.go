package engine_test

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine"
)

// A secret used as a file or directory name meets the gate as text (issue
// 32, case 4): an artifact under it is refused under deny, and in a
// tainted run the path a write names is masked wherever it is shown (the
// call's title and locations, its completion, the plan) and kept (the
// record's files, their names too).
func TestTaint_namesMeetTheGate(t *testing.T) {
	f := taintFixtureOf(t, `
[agent]
name = "taint"
[agent.taint]
policy = "deny"
[stages.answer]
mode = "output"
available_tools = ["read_file", "write_file", "edit_file"]
`, readEnv+`
[[turn]]
[[turn.tool_calls]]
name = "write_file"
arguments = { path = "out/`+secretKey+`/notes.txt", content = "notes\n" }

[[turn]]
[[turn.tool_calls]]
name = "edit_file"
arguments = { path = "out/`+secretKey+`/notes.txt", old = "notes", new = "more notes" }

[[turn]]
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "Attached.", artifacts = ["out/`+secretKey+`/notes.txt"] }

[[turn]]
expect = "This answer would carry"
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "Done." }
`, func(engine.PermissionRequest) bool { return true })
	sink := &events{}
	res := runTurn(context.Background(), f.turn, sink)
	if res.Answer == nil || res.Answer.Content != "Done." || len(res.Answer.Artifacts) != 0 {
		t.Fatalf("answer = %+v (%s), want the artifact under the key's name refused\n%s", res.Answer, res.NoAnswer, f.logs)
	}
	res.Recorded()
	if b, _ := os.ReadFile(filepath.Join(f.turn.Workspace.Cwd(), "out", secretKey, "notes.txt")); string(b) != "more notes\n" {
		t.Errorf("the file written and edited holds %q", b)
	}
	const piece = "4fGh82kLmN0p"
	for _, ev := range sink.evs {
		if ev.ToolCall != nil && ev.ToolCall.Title == "Read .env" {
			continue // the reading itself is the user's to see
		}
		b, _ := json.Marshal(ev)
		shown := string(b)
		if ev.ToolCall != nil {
			shown += "\n" + string(ev.ToolCall.RawInput)
		}
		if strings.Contains(shown, piece) {
			t.Errorf("a %v event shows the key: %.600s", ev.Kind, shown)
		}
	}
	for _, req := range f.asks {
		if b, _ := json.Marshal(req); strings.Contains(string(b), piece) {
			t.Errorf("a permission request shows the key: %.600s", b)
		}
	}
	filepath.WalkDir(filepath.Join(f.dir, "state"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.Contains(path, piece) {
			t.Errorf("the record keeps a file named with the key: %s", path)
		}
		if d.Type().IsRegular() {
			if b, _ := os.ReadFile(path); strings.Contains(string(b), piece) {
				t.Errorf("%s holds the key:\n%.800s", path, b)
			}
		}
		return nil
	})
}
