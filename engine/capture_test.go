package engine_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/outputspec"
)

// After an accepted answer, the files its capture globs match are kept as
// its artifacts, typed, hashed and copied into the record as the ones the
// model names are; a private file is skipped, and status.json says so.
func TestRun_capture(t *testing.T) {
	turn := newTurn(t, `
[agent]
name = "one"
[stages.answer]
mode = "output"
available_tools = ["write_file"]
[stages.answer.output]
capture = ["reports/**", ".env*"]
`, `
[[turn]]
[[turn.tool_calls]]
name = "write_file"
arguments = { path = "reports/r.xml", content = "<r/>" }
[[turn]]
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "Done.", artifacts = ["notes.md"] }
`)
	turn.Engine.Tools = builtinTools()
	dir := turn.Workspace.Cwd()
	writeFiles(t, dir, map[string]string{"notes.md": "# notes", ".env.prod": "API_KEY=sk-live-4f9a8b7c6d5e4f3a2b1c\n"})
	turn.Workspace = approving(dir)
	res := runTurn(context.Background(), turn, &events{})
	ended(t, res, engine.StatusAnswered, "end_turn")
	arts := res.Answer.Artifacts
	if len(arts) != 2 || arts[0].Path != "notes.md" || arts[1].Path != "reports/r.xml" {
		t.Fatalf("artifacts %+v, want notes.md as named, then reports/r.xml captured", arts)
	}
	if a := arts[1]; a.SHA256 == "" || a.Size != 4 || a.RunPath == "" {
		t.Errorf("captured %+v: want it hashed, sized and kept in the record", a)
	}
	if _, err := os.Stat(recordPath(turn, "artifacts/r.xml")); err != nil {
		t.Errorf("the record keeps no copy: %v", err)
	}
	var status struct {
		Capture struct {
			Kept    []string             `json:"kept"`
			Skipped []outputspec.Skipped `json:"skipped"`
		} `json:"capture"`
	}
	b, err := os.ReadFile(recordPath(turn, "stages/001-answer@1/status.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &status); err != nil {
		t.Fatal(err)
	}
	if len(status.Capture.Kept) != 1 || len(status.Capture.Skipped) != 1 || status.Capture.Skipped[0].Path != ".env.prod" {
		t.Errorf("status.json's capture %+v, want r.xml kept and .env.prod skipped as private", status.Capture)
	}
}

// A capture walks every root of the session, its additional directories
// too: a report written under another root is kept, named relative to the
// working directory, and copied into the record.
func TestRun_captureEveryRoot(t *testing.T) {
	turn := newTurn(t, `
[agent]
name = "roots"
[stages.answer]
mode = "output"
[stages.answer.output]
capture = ["reports/*.xml"]
`, `
[[turn]]
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "Done." }
`)
	base := t.TempDir()
	cwd, extra := filepath.Join(base, "proj"), filepath.Join(base, "data")
	writeFiles(t, cwd, map[string]string{"reports/a.xml": "<a/>"})
	writeFiles(t, extra, map[string]string{"reports/b.xml": "<b/>", "reports/.env.xml": "<k/>"})
	ws := approving(cwd)
	ws.Extra = []string{extra}
	turn.Workspace = ws
	res := runTurn(context.Background(), turn, &events{})
	ended(t, res, engine.StatusAnswered, "end_turn")
	var got []string
	for _, a := range res.Answer.Artifacts {
		got = append(got, a.Path)
		if a.RunPath == "" || a.SHA256 == "" {
			t.Errorf("captured %+v: want it hashed and kept in the record", a)
		}
	}
	if want := []string{"reports/a.xml", "../data/reports/b.xml"}; !slices.Equal(got, want) {
		t.Errorf("artifacts %q, want %q", got, want)
	}
	if b, err := os.ReadFile(recordPath(turn, "artifacts/b.xml")); err != nil || string(b) != "<b/>" {
		t.Errorf("the record's copy of b.xml: %q, %v", b, err)
	}
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// The same path and hash is copied into the record once a run: a later
// accepted answer that names the file again, unchanged, and a capture that
// finds it again keep the first copy (DESIGN §19). A changed file is
// copied again.
func TestRun_artifactCopiedOnce(t *testing.T) {
	turn := newTurn(t, `
[agent]
name = "again"
[stages.answer]
mode = "output"
available_tools = ["write_file"]
[stages.answer.output]
capture = ["notes.md"]
[stages.answer.transitions.after]
hint = "The answer is in"
[stages.after]
`, `
[[turn]]
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "First.", artifacts = ["notes.md"] }
[[turn]]
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "Second." }
[[turn]]
[[turn.tool_calls]]
name = "write_file"
arguments = { path = "notes.md", content = "# notes, changed" }
[[turn]]
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "Third.", artifacts = ["notes.md"] }
[[turn]]
[[turn.tool_calls]]
name = "transition"
arguments = { to = "after" }
[[turn]]
text = "Done."
`)
	turn.Engine.Tools = builtinTools()
	dir := turn.Workspace.Cwd()
	writeFiles(t, dir, map[string]string{"notes.md": "# notes"})
	turn.Workspace = approving(dir)
	copied := recordPath(turn, "artifacts/notes.md")
	var seen []string // the record's copy after each accepted answer
	submits := map[string]bool{}
	sink := &events{on: func(ev engine.Event) {
		switch {
		case ev.Kind == engine.EventToolCall && ev.ToolCall.Name == "submit_output":
			submits[ev.ToolCall.ID] = true
		case ev.Kind == engine.EventToolCallUpdate && ev.ToolCall.Status == engine.ToolCompleted && submits[ev.ToolCall.ID]:
			b, err := os.ReadFile(copied)
			if err != nil {
				t.Error(err)
				return
			}
			seen = append(seen, string(b))
			// Marked, so that a copy made again would show.
			if err := os.WriteFile(copied, []byte("marked"), 0o644); err != nil {
				t.Error(err)
			}
		}
	}}
	res := runTurn(context.Background(), turn, sink)
	if res.Answer == nil || res.Answer.Content != "Third." {
		t.Fatalf("answer %+v, want the third", res.Answer)
	}
	// First: copied. Second (captured, unchanged): kept, not copied.
	// Third (named, changed): copied again.
	if want := []string{"# notes", "marked", "# notes, changed"}; !slices.Equal(seen, want) {
		t.Errorf("the record's copy after each answer: %q, want %q", seen, want)
	}
}
