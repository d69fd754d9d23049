package acp_test

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coda-acp/coda/acp"
	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/store"
)

// The session's later turns read a note where an image was: images are
// sent in their own turn only.
func TestPrompt_imageHistory(t *testing.T) {
	state := t.TempDir()
	m := serveLive(t, `
[[turn]]
expect = "[image image/png, 8 bytes]"
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "A PNG." }

[[turn]]
expect = "And its size?"
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "8 bytes." }
`, acp.Options{Engine: &engine.Engine{Store: store.New(state)}})
	m.request(1, "session/new", newSession())
	png := base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\n"))
	resp := m.request(2, "session/prompt", map[string]any{"sessionId": "s-1", "prompt": []map[string]string{
		{"type": "text", "text": "What is this?"}, {"type": "image", "mimeType": "image/png", "data": png},
	}})
	if !strings.Contains(resp, `"status":"answered"`) {
		t.Fatalf("first prompt: %s", resp)
	}
	if resp := m.request(3, "session/prompt", prompt("s-1", "And its size?")); !strings.Contains(resp, `"status":"answered"`) {
		t.Fatalf("second prompt: %s", resp)
	}
	m.end() // the records are finished after the answers, before coda exits
	first, _ := os.ReadFile(filepath.Join(state, "runs", "r-1", "stages", "001-answer@1", "prompt.md"))
	second, _ := os.ReadFile(filepath.Join(state, "runs", "r-2", "stages", "001-answer@1", "prompt.md"))
	if !strings.Contains(string(first), "What is this?\n\n[image image/png, 8 bytes]") {
		t.Errorf("the first run's prompt.md does not show the image:\n%s", first)
	}
	// The second run's prompt.md names the first turn by its run id; the
	// session keeps that turn with a note in the image's place.
	if !strings.Contains(string(second), "[earlier turn 1: run r-1]") || strings.Contains(string(second), "[image image/png") {
		t.Errorf("the second run's prompt.md:\n%s\nwant the earlier turn named by its run id", second)
	}
	stored, _ := os.ReadFile(filepath.Join(state, "sessions", "s-1.jsonl"))
	note := `What is this?\n\n[The user attached an image here (image/png, 8 bytes); it was shown only in that turn.]`
	if !strings.Contains(string(stored), note) {
		t.Errorf("the session's history:\n%s\nwant the earlier prompt with a note in the image's place", stored)
	}
}
