package acp_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coda-acp/coda/acp"
	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/provider/script"
	"github.com/coda-acp/coda/store"
)

// A session keeps each turn's transcript in its file: after a load (the
// session read back from the file), the next turn's first request starts
// with the previous turn's last one, tool call and result included
// (DESIGN §23).
func TestSession_transcriptThroughTheFile(t *testing.T) {
	sc, err := script.Parse([]byte(`
[[turn]]
[[turn.tool_calls]]
name = "read_file"
arguments = { path = "a.txt" }
[[turn]]
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "A says hello." }
[[turn]]
expect = "And b?"
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "There is no b." }
`), "model.toml")
	if err != nil {
		t.Fatal(err)
	}
	rec := &requestsOf{model: script.New("script:test", sc)}
	m := serveLive(t, "", acp.Options{Engine: &engine.Engine{Models: rec, Store: store.New(t.TempDir())}})
	if err := os.WriteFile(filepath.Join(m.work, "a.txt"), []byte("hello from a\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	m.request(1, "session/new", newSession())
	if resp := m.request(2, "session/prompt", prompt("s-1", "What does a.txt say?")); !strings.Contains(resp, `"status":"answered"`) {
		t.Fatalf("first prompt: %s", resp)
	}
	m.request(3, "session/load", map[string]any{"sessionId": "s-1", "cwd": m.work, "mcpServers": []any{}})
	if resp := m.request(4, "session/prompt", prompt("s-1", "And b?")); !strings.Contains(resp, `"status":"answered"`) {
		t.Fatalf("second prompt: %s", resp)
	}
	m.end()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.sent) != 3 {
		t.Fatalf("%d requests, want 3", len(rec.sent))
	}
	last, next := rec.sent[1], rec.sent[2]
	if !strings.HasPrefix(next, last) || !strings.Contains(last, "hello from a") || !strings.Contains(next[len(last):], "A says hello.") {
		t.Errorf("the second turn's request does not start with the first turn's last:\nlast:\n%s\nnext:\n%s", last, next)
	}
}

// A session file from before transcripts were kept loads, and its turns
// are shown as they were: framed before the task; the turn after shows
// the old turn in a message of its own, then the new turn as it was sent.
func TestSession_fileWithoutTranscripts(t *testing.T) {
	sc, err := script.Parse([]byte(`
[[turn]]
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "New answer." }
[[turn]]
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "Again." }
`), "model.toml")
	if err != nil {
		t.Fatal(err)
	}
	rec := &requestsOf{model: script.New("script:test", sc)}
	state := t.TempDir()
	m := serveLive(t, "", acp.Options{Engine: &engine.Engine{Models: rec, Store: store.New(state)}})
	cwd, _ := json.Marshal(m.work)
	file := `{"type":"session","version":2,"at":"2026-01-01T00:00:00Z","session":{"id":"s-old","cwd":` + string(cwd) + `,"createdAt":"2026-01-01T00:00:00Z"}}
{"type":"exchange","at":"2026-01-01T00:01:00Z","exchange":{"prompt":[{"type":"text","text":"Old question?"}],"history":{"prompt":"Old question?","answer":"Old answer."},"runId":"r-0"}}
`
	if err := os.MkdirAll(filepath.Join(state, "sessions"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(state, "sessions", "s-old.jsonl"), []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	if resp := m.request(1, "session/load", map[string]any{"sessionId": "s-old", "cwd": m.work, "mcpServers": []any{}}); strings.Contains(resp, `"error"`) {
		t.Fatalf("load: %s", resp)
	}
	for i, text := range []string{"New question?", "Again?"} {
		if resp := m.request(2+i, "session/prompt", prompt("s-old", text)); !strings.Contains(resp, `"status":"answered"`) {
			t.Fatalf("prompt %q: %s", text, resp)
		}
	}
	m.end()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	first, second := rec.sent[0], rec.sent[1]
	if !strings.Contains(first, "## This session's earlier turns") || !strings.Contains(first, "Old question?") || !strings.Contains(first, "Old answer.") {
		t.Errorf("the first turn after the load:\n%s", first)
	}
	if !strings.Contains(second, "[Earlier turn 1 of this session]") || !strings.Contains(second, "Old question?") ||
		!strings.Contains(second, "\nNew question?\n") || !strings.Contains(second, "New answer.") {
		t.Errorf("the turn after:\n%s", second)
	}
}
