package acp_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"

	"github.com/coda-acp/coda/acp"
	"github.com/coda-acp/coda/acp/acptest"
	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/blueprint"
	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/provider/script"
	"github.com/coda-acp/coda/engine/tools"
	"github.com/coda-acp/coda/internal/prices"
	"github.com/coda-acp/coda/store"
)

// usageAgent fans out to a worker stage whose answer must be JSON, then
// answers in its own stage.
const usageAgent = `
[agent]
name = "usage"
[stages.plan]
available_tools = ["fan_out"]
[stages.plan.fan_out]
worker = "check"
[stages.plan.transitions.merge]
hint = "Every slice is back"
[stages.check]
allow_as_worker = true
require_output = true
[stages.check.output]
format = "json"
schema = { type = "object", required = ["file", "ok"] }
[stages.merge]
mode = "output"
`

// usageModel is five calls with their tokens: the worker's first answer
// is refused (a repair), its second taken.
const usageModel = `
context_window = 100000
[[turn]]
usage = { input = 100, output = 10 }
[[turn.tool_calls]]
name = "fan_out"
arguments = { tasks = [ { id = "a.go", prompt = "Check a.go" } ] }
[[turn]]
for = "a.go"
usage = { input = 50, output = 5, cached_read = 20 }
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = '{"file": "a.go"}' }
[[turn]]
for = "a.go"
usage = { input = 60, output = 6, cached_read = 40, reasoning = 2 }
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = '{"file": "a.go", "ok": true}' }
[[turn]]
usage = { input = 200, output = 20, cached_write = 100 }
[[turn.tool_calls]]
name = "transition"
arguments = { to = "merge" }
[[turn]]
usage = { input = 300, output = 30, cached_read = 150, reasoning = 7 }
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "a.go is fine." }
`

// usageTurn serves one session over pipes with usageModel, facts saying
// what is known of it, runs one prompt, then a slash command, and returns
// every line coda sent.
func usageTurn(t *testing.T, facts llm.ModelFacts) []string {
	t.Helper()
	agent, err := blueprint.Parse([]byte(usageAgent), "blueprint.toml")
	if err != nil {
		t.Fatal(err)
	}
	sc, err := script.Parse([]byte(usageModel), "model.toml")
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	srv, err := acp.NewServer(acp.Options{
		Agent: agent, LaunchDir: work, UserModel: "script:test", Version: "test",
		Engine: &engine.Engine{Models: oneModel{script.New("script:test", sc)}, Tools: tools.Builtin(), Store: store.New(t.TempDir()), IDs: counter(), ModelFacts: facts},
	})
	if err != nil {
		t.Fatal(err)
	}
	c, served := serve(t, context.Background(), srv, work, nil)
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`,
		`await "id":0`,
		`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"$WORK","mcpServers":[]}}`,
		`await "id":1`,
		`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s-1","prompt":[{"type":"text","text":"Check the files."}]}}`,
		`await "id":2`,
		`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s-1","prompt":[{"type":"text","text":"/mode ask"}]}}`,
		`await "id":3`,
	} {
		c.do(line)
	}
	c.closeInput()
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
	c.wait()
	lines, _ := c.lines()
	return lines
}

// response is the result of the response to the request with id.
func response(t *testing.T, lines []string, id string) json.RawMessage {
	t.Helper()
	for _, l := range lines {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if json.Unmarshal([]byte(l), &m) == nil && string(m.ID) == id && m.Result != nil {
			return m.Result
		}
	}
	t.Fatalf("no response to %s in:\n%s", id, strings.Join(lines, "\n"))
	return nil
}

// The prompt's response carries the turn's usage: every call's tokens
// summed, the worker's and its repair's included, valid against the
// stable schema (which lets it through) and the unstable one (which
// defines it). A slash command's response says it used none.
func TestPromptUsage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lines := usageTurn(t, nil)
		type usage struct {
			TotalTokens       *int `json:"totalTokens"`
			InputTokens       *int `json:"inputTokens"`
			OutputTokens      *int `json:"outputTokens"`
			ThoughtTokens     *int `json:"thoughtTokens"`
			CachedReadTokens  *int `json:"cachedReadTokens"`
			CachedWriteTokens *int `json:"cachedWriteTokens"`
		}
		n := func(i int) *int { return &i }
		for _, tt := range []struct {
			id   string
			want usage
		}{
			{"2", usage{n(781), n(710), n(71), n(9), n(210), n(100)}},
			{"3", usage{n(0), n(0), n(0), n(0), n(0), n(0)}},
		} {
			res := response(t, lines, tt.id)
			if err := acptest.CheckResult("session/prompt", res); err != nil {
				t.Errorf("response %s against the stable schema: %v", tt.id, err)
			}
			if err := acptest.CheckUnstableResult("session/prompt", res); err != nil {
				t.Errorf("response %s against the unstable schema: %v", tt.id, err)
			}
			var got struct {
				Usage usage `json:"usage"`
			}
			if err := json.Unmarshal(res, &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got.Usage); diff != "" {
				t.Errorf("response %s's usage (-want +got):\n%s\n%s", tt.id, diff, res)
			}
		}
	})
}

// usageUpdates are the usage_update objects coda sent, in order.
func usageUpdates(t *testing.T, lines []string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range lines {
		var m struct {
			Params struct {
				Update map[string]any `json:"update"`
			} `json:"params"`
		}
		if json.Unmarshal([]byte(l), &m) == nil && m.Params.Update["sessionUpdate"] == "usage_update" {
			out = append(out, m.Params.Update)
		}
	}
	return out
}

// With a price, each usage_update carries the session's cost so far (the
// worker's calls counted in the next one), and the prompt's response the
// turn's; without one, both say the cost is unknown and name the model,
// and no usage_update carries a cost.
func TestPromptUsage_cost(t *testing.T) {
	priced := func(string) llm.ModelFact {
		return llm.ModelFact{Price: &prices.Price{Input: 3, Output: 15, CachedRead: 0.3, CachedWrite: 3.75}}
	}
	for _, tt := range []struct {
		name    string
		facts   llm.ModelFacts
		updates []any // each usage_update's cost, or its _meta.coda
		turn    string
	}{
		{"priced", priced, []any{
			map[string]any{"amount": 0.00045, "currency": "USD"},
			map[string]any{"amount": 0.001758, "currency": "USD"},
			map[string]any{"amount": 0.002703, "currency": "USD"},
		}, `{"calls":5,"cost":{"amount":0.002703,"currency":"USD"}}`},
		{"unpriced", nil, []any{
			map[string]any{"cost": "unknown", "unpriced": []any{"script:test"}},
			map[string]any{"cost": "unknown", "unpriced": []any{"script:test"}},
			map[string]any{"cost": "unknown", "unpriced": []any{"script:test"}},
		}, `{"calls":5,"cost":"unknown","unpriced":["script:test"]}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				lines := usageTurn(t, tt.facts)
				var got []any
				for _, u := range usageUpdates(t, lines) {
					if c, ok := u["cost"]; ok {
						got = append(got, c)
						continue
					}
					meta, _ := u["_meta"].(map[string]any)
					coda, _ := meta["coda"].(map[string]any)
					delete(coda, "cacheReadTokens")
					delete(coda, "cacheWriteTokens")
					got = append(got, coda)
				}
				if diff := cmp.Diff(tt.updates, got); diff != "" {
					t.Errorf("usage_update costs (-want +got):\n%s", diff)
				}
				var res struct {
					Usage struct {
						Meta struct {
							Coda json.RawMessage `json:"coda"`
						} `json:"_meta"`
					} `json:"usage"`
				}
				if err := json.Unmarshal(response(t, lines, "2"), &res); err != nil {
					t.Fatal(err)
				}
				if string(res.Usage.Meta.Coda) != tt.turn {
					t.Errorf("usage._meta.coda = %s, want %s", res.Usage.Meta.Coda, tt.turn)
				}
			})
		})
	}
}
