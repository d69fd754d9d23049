package engine_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/internal/prices"
	"github.com/coda-acp/coda/store"
)

// spendScript is a turn of five calls, each reporting its tokens: the
// plan fans out to one worker, whose first answer is refused (a repair)
// and second taken; the plan moves on to merge, which answers.
const spendScript = `
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
expect = "ok"
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

// testPrice is what script:test costs in these tests: Claude Sonnet's
// figures, a cache read a tenth of an input token, a write 1.25 times.
var testPrice = prices.Price{Input: 3, Output: 15, CachedRead: 0.3, CachedWrite: 3.75}

// The turn's usage is the sum of every call's, the worker's and its
// repair's included: on the Result, in run.json, and as the status.json
// files of every stage visit add up; the worker's run.json has its own.
// Each usage event carries the turn's spend so far, the last the whole.
func TestUsage_turnSumsEveryCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		turn := newTurn(t, fanBlueprint("", ""), spendScript)
		turn.IDs = ids()
		turn.ModelFacts = func(spec string) llm.ModelFact {
			if spec != "script:test" {
				t.Errorf("price asked of %q", spec)
			}
			p := testPrice
			return llm.ModelFact{Price: &p}
		}
		sink := &events{}
		res := runTurn(context.Background(), turn, sink)
		ended(t, res, engine.StatusAnswered, "end_turn")

		// 400 fresh input tokens at $3, 210 cached reads at $0.30, 100
		// cached writes at $3.75, 71 output tokens at $15, per million.
		want := store.Spend{
			Calls: 5, InputTokens: 710, OutputTokens: 71, ReasoningTokens: 9, CacheReadTokens: 210, CacheWriteTokens: 100,
			Cost: &prices.Cost{Amount: 0.002703, Currency: "USD"},
		}
		if diff := cmp.Diff(want, res.Usage); diff != "" {
			t.Errorf("Result.Usage (-want +got):\n%s", diff)
		}
		rr, err := turn.Store.ReadRun("run-1")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(&want, rr.Usage); diff != "" {
			t.Errorf("run.json usage (-want +got):\n%s", diff)
		}
		w1, err := turn.Store.ReadSubRun("run-1", "workers/w1")
		if err != nil {
			t.Fatal(err)
		}
		wantW1 := &store.Spend{Calls: 2, InputTokens: 110, OutputTokens: 11, ReasoningTokens: 2, CacheReadTokens: 60,
			Cost: &prices.Cost{Amount: (50*3 + 60*0.3 + 11*15) / 1e6, Currency: "USD"}}
		if diff := cmp.Diff(wantW1, w1.Usage); diff != "" {
			t.Errorf("workers/w1/run.json usage (-want +got):\n%s", diff)
		}

		// Every visit's status.json, the worker's included, adds up to it.
		var sum store.Spend
		var cost float64
		statuses, _ := filepath.Glob(recordPath(turn, "stages/*/status.json"))
		workers, _ := filepath.Glob(recordPath(turn, "workers/*/stages/*/status.json"))
		for _, p := range append(statuses, workers...) {
			var st struct {
				Calls []struct {
					Usage llm.Usage    `json:"usage"`
					Cost  *prices.Cost `json:"cost"`
				} `json:"calls"`
			}
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &st); err != nil {
				t.Fatal(err)
			}
			for _, c := range st.Calls {
				sum.Calls++
				sum.InputTokens += c.Usage.InputTokens
				sum.OutputTokens += c.Usage.OutputTokens
				sum.ReasoningTokens += c.Usage.ReasoningTokens
				sum.CacheReadTokens += c.Usage.CacheReadTokens
				sum.CacheWriteTokens += c.Usage.CacheWriteTokens
				if c.Cost == nil {
					t.Errorf("%s: a priced call without its cost", p)
				} else {
					cost += c.Cost.Amount
				}
			}
		}
		sum.Cost = prices.Dollars(cost)
		if diff := cmp.Diff(want, sum); diff != "" {
			t.Errorf("the status.json files' calls, summed (-want +got):\n%s", diff)
		}

		var last *store.Spend
		for _, ev := range sink.evs {
			if ev.Kind == engine.EventUsage {
				last = ev.Spent
			}
		}
		if diff := cmp.Diff(&want, last); diff != "" {
			t.Errorf("the last usage event's spend (-want +got):\n%s", diff)
		}
	})
}

// A model without a known price: the tokens are counted, the cost is
// absent (never zero), and the model is named as unpriced.
func TestUsage_unpriced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		turn := newTurn(t, fanBlueprint("", ""), spendScript)
		turn.IDs = ids()
		res := runTurn(context.Background(), turn, &events{})
		ended(t, res, engine.StatusAnswered, "end_turn")
		want := store.Spend{
			Calls: 5, InputTokens: 710, OutputTokens: 71, ReasoningTokens: 9, CacheReadTokens: 210, CacheWriteTokens: 100,
			Unpriced: []string{"script:test"},
		}
		if diff := cmp.Diff(want, res.Usage); diff != "" {
			t.Errorf("Result.Usage (-want +got):\n%s", diff)
		}
		b, err := os.ReadFile(recordPath(turn, "run.json"))
		if err != nil {
			t.Fatal(err)
		}
		var rr struct {
			Usage map[string]any `json:"usage"`
		}
		if err := json.Unmarshal(b, &rr); err != nil {
			t.Fatal(err)
		}
		if _, ok := rr.Usage["cost"]; ok {
			t.Errorf("run.json usage has a cost for an unpriced model: %v", rr.Usage)
		}
	})
}
