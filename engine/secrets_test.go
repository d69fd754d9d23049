package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/taint"
)

// A secret the model read in .env and restated is masked in what later
// stages and the record keep (DESIGN §19): the next stage's preamble and
// prompt.md, the visit's last_response and response.md; with the gate off
// for egress as with it on. The model's own call still got the file whole.
func TestRun_secretsMaskedForLaterStages(t *testing.T) {
	const key = "sk-live-4f9a8b7c6d5e4f3a2b1c"
	for _, policy := range []string{"", taint.Allow} {
		t.Run("policy="+policy, func(t *testing.T) {
			turn, sp := scripted(t, `
[agent]
name = "two"
[stages.explore]
available_tools = ["read_file"]
[stages.explore.transitions.report]
hint = "Seen enough"
[stages.report]
mode = "output"
`, `
[[turn]]
[[turn.tool_calls]]
name = "read_file"
arguments = { path = ".env" }

[[turn]]
text = "The API key is `+key+`."
[[turn.tool_calls]]
name = "transition"
arguments = { to = "report" }

[[turn]]
text = "There is an API key."
`)
			turn.Engine.Tools = builtinTools()
			turn.Engine.Taint = taint.Launch{Policy: policy}
			dir := turn.Workspace.Cwd()
			if err := os.WriteFile(filepath.Join(dir, ".env"), []byte("API_KEY="+key+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			res := runTurn(context.Background(), turn, &events{})
			ended(t, res, engine.StatusAnswered, "end_turn")
			var read string
			for _, m := range sp.reqs[1].Messages {
				if m.ToolName == "read_file" {
					read = m.Text
				}
			}
			if !strings.Contains(read, key) {
				t.Errorf("the model's own call did not get the file whole:\n%s", read)
			}
			preamble := sp.reqs[2].Messages[0].Text
			files := map[string]string{"the next stage's preamble": preamble}
			for _, f := range []string{"stages/002-report@1/prompt.md", "stages/001-explore@1/last_response", "stages/001-explore@1/response.md"} {
				b, err := os.ReadFile(recordPath(turn, f))
				if err != nil {
					t.Fatal(err)
				}
				files[f] = string(b)
			}
			for name, text := range files {
				if strings.Contains(text, "4f9a8b7c6d5e4f3a2b1c") {
					t.Errorf("%s carries the key:\n%s", name, text)
				}
			}
			for _, name := range []string{"the next stage's preamble", "stages/002-report@1/prompt.md", "stages/001-explore@1/last_response"} {
				if !strings.Contains(files[name], "The API key is sk-…1c.") {
					t.Errorf("%s lacks the masked key:\n%s", name, files[name])
				}
			}
		})
	}
}

// A private file the prompt embeds reaches the model whole, but run.json's
// prompt and prompt.md keep it masked.
func TestRun_secretsMaskedInPromptRecord(t *testing.T) {
	const key = "sk-live-4f9a8b7c6d5e4f3a2b1c"
	turn, sp := scripted(t, defaultAgent, `
[[turn]]
text = "There is a key."
`)
	env := filepath.Join(turn.Workspace.Cwd(), ".env")
	turn.Prompt = "What is in this?\n\n" + engine.Frame("resource file://"+env, "API_KEY="+key+"\n")
	turn.PromptSources = []taint.Source{{Path: env, Text: "API_KEY=" + key + "\n"}}
	res := runTurn(context.Background(), turn, &events{})
	ended(t, res, engine.StatusAnswered, "end_turn")
	if !strings.Contains(sp.reqs[0].Messages[0].Text, key) {
		t.Errorf("the model was not sent the resource whole")
	}
	for _, f := range []string{"run.json", "stages/001-answer@1/prompt.md"} {
		b, err := os.ReadFile(recordPath(turn, f))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "4f9a8b7c6d5e4f3a2b1c") || !strings.Contains(string(b), "API_KEY=sk-…1c") {
			t.Errorf("%s keeps the key, or not its masked form:\n%s", f, b)
		}
	}
}

// An earlier turn kept with a secret in clear (a session written before
// history was masked) reaches the model masked, the private file it came
// from found under the roots though this turn never read it; prompt.md
// writes that turn out as the model was sent it, not as a reference to a
// run whose record has it in clear.
func TestRun_historyMasked(t *testing.T) {
	const key = "sk-live-4f9a8b7c6d5e4f3a2b1c"
	turn, sp := scripted(t, `
[agent]
name = "one"
[stages.answer]
mode = "output"
`, `
[[turn]]
text = "Done."
`)
	turn.History = []engine.Exchange{
		{Prompt: "What is the key?", Answer: "The key is " + key + ".", RunID: "r-0"},
		{Prompt: "And the port?", Answer: "5432.", RunID: "r-00"},
	}
	if err := os.WriteFile(filepath.Join(turn.Workspace.Cwd(), ".env"), []byte("API_KEY="+key+"\nPORT=5432\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ended(t, runTurn(context.Background(), turn, &events{}), engine.StatusAnswered, "end_turn")
	sent := sp.reqs[0].Messages[0].Text
	if strings.Contains(sent, "4f9a8b7c6d5e4f3a2b1c") || !strings.Contains(sent, "The key is sk-…1c.") {
		t.Errorf("the request's history:\n%s\nwant the key masked", sent)
	}
	b, err := os.ReadFile(recordPath(turn, "stages/001-answer@1/prompt.md"))
	if err != nil {
		t.Fatal(err)
	}
	if p := string(b); strings.Contains(p, "4f9a8b7c6d5e4f3a2b1c") || !strings.Contains(p, "The key is sk-…1c.") || strings.Contains(p, "run r-0]") {
		t.Errorf("prompt.md:\n%s\nwant the masked turn written out as sent", p)
	}
}
