package acp_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/coda-acp/coda/acp"
	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/provider/script"
	"github.com/coda-acp/coda/engine/taint"
	"github.com/coda-acp/coda/store"
)

// requestsOf is a model that keeps the text of every request it is sent.
type requestsOf struct {
	model llm.Model
	mu    sync.Mutex
	sent  []string
}

func (r *requestsOf) Model(string) (llm.Model, error) { return r, nil }
func (r *requestsOf) Name() string                    { return r.model.Name() }

func (r *requestsOf) Stream(ctx context.Context, req *llm.Request, onDelta func(llm.Delta) error) (*llm.Response, error) {
	var b strings.Builder
	for _, m := range req.Messages { // every text of it: the transcript's calls and thoughts too
		b.WriteString(m.Thinking + "\n" + m.Text + "\n" + string(m.Replay) + "\n")
		for _, tc := range m.ToolCalls {
			b.Write(tc.Arguments)
			b.WriteString("\n")
		}
	}
	r.mu.Lock()
	r.sent = append(r.sent, b.String())
	r.mu.Unlock()
	return r.model.Stream(ctx, req, onDelta)
}

// A secret a turn's answer and commentary carried (the gate off, or
// `allow`) is masked in what the session keeps for later (DESIGN §13,
// §19): the next turn's request, the session's file, a load's replay; the
// next run's prompt.md writes the earlier turn out as the model was sent
// it, not as a reference to a record that has it in clear.
func TestSession_secretsMaskedInHistory(t *testing.T) {
	const key = "sk-live-4f9a8b7c6d5e4f3a2b1c"
	const model = `
[[turn]]
[[turn.tool_calls]]
name = "read_file"
arguments = { path = ".env" }

[[turn]]
thinking = "The key is ` + key + `, as read."
text = ["I found ", "` + key + `", " in .env."]
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "The key is ` + key + `." }

[[turn]]
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "Done." }
`
	for _, policy := range []string{"", taint.Allow} {
		t.Run("policy="+policy, func(t *testing.T) {
			sc, err := script.Parse([]byte(model), "model.toml")
			if err != nil {
				t.Fatal(err)
			}
			rec := &requestsOf{model: script.New("script:test", sc)}
			state := t.TempDir()
			m := serveLive(t, "", acp.Options{Engine: &engine.Engine{Models: rec, Store: store.New(state), Taint: taint.Launch{Policy: policy}}})
			if err := os.WriteFile(filepath.Join(m.work, ".env"), []byte("API_KEY="+key+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			m.request(1, "session/new", newSession())
			if resp := m.request(2, "session/prompt", prompt("s-1", "What is the key?")); !strings.Contains(resp, key) {
				t.Fatalf("first prompt: %s\nwant the answer with the key, which the gate let through", resp)
			}
			if resp := m.request(3, "session/prompt", prompt("s-1", "Thanks.")); !strings.Contains(resp, `"status":"answered"`) {
				t.Fatalf("second prompt: %s", resp)
			}
			from := len(m.allLines())
			m.request(4, "session/load", map[string]any{"sessionId": "s-1", "cwd": m.work, "mcpServers": []any{}})
			replay := strings.Join(m.allLines()[from:], "\n")
			m.end()
			rec.mu.Lock()
			next := rec.sent[len(rec.sent)-1]
			rec.mu.Unlock()
			stored, _ := os.ReadFile(filepath.Join(state, "sessions", "s-1.jsonl"))
			prompt2, _ := os.ReadFile(filepath.Join(state, "runs", "r-2", "stages", "001-answer@1", "prompt.md"))
			for name, text := range map[string]string{"the next turn's request": next, "the session's file": string(stored), "session/load's replay": replay, "the next run's prompt.md": string(prompt2)} {
				if strings.Contains(text, "4f9a8b7c6d5e4f3a2b1c") {
					t.Errorf("%s carries the key:\n%s", name, text)
				}
			}
			if !strings.Contains(next, "The key is sk-…1c.") {
				t.Errorf("the next turn's request lacks the masked answer:\n%s", next)
			}
			if !strings.Contains(string(prompt2), "The key is sk-…1c.") || strings.Contains(string(prompt2), "[earlier turn 1: run r-1]") {
				t.Errorf("the next run's prompt.md does not say what the model was sent:\n%s", prompt2)
			}
			if !strings.Contains(replay, "sk-…1c") {
				t.Errorf("the replay lacks the masked turn:\n%s", replay)
			}
		})
	}
}
