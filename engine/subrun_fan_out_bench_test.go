package engine_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/blueprint"
	"github.com/coda-acp/coda/engine/local"
	"github.com/coda-acp/coda/engine/provider/script"
	"github.com/coda-acp/coda/outputspec"
)

// BenchmarkFanOut runs 16 workers whose script model takes a fixed delay
// per call (a stand-in for a model's latency), all at once
// (max_workers = 16) and one at a time (max_workers = 1), the same work
// through the same engine. With a delay the fan-out's wall time should
// approach one worker's (one: a single worker, measured alongside), not
// the sum of all sixteen; with none it is the engine's own cost of running
// workers. Compare with benchstat:
//
//	go test ./engine -run '^$' -bench FanOut -count 7 | tee fan.txt
func BenchmarkFanOut(b *testing.B) {
	const workers = 16
	for _, delay := range []int{0, 20} {
		// one is a single worker: the slowest worker's own time, the
		// floor a fan-out approaches.
		for _, c := range []struct {
			name      string
			tasks, at int
		}{{"fanout", workers, workers}, {"serial", workers, 1}, {"one", 1, 1}} {
			parsed, err := script.Parse([]byte(fanOutScript(c.tasks, delay)), "bench")
			if err != nil {
				b.Fatal(err)
			}
			bp, err := blueprint.Parse([]byte(fmt.Sprintf(`
[agent]
name = "bench"
[stages.plan]
[stages.plan.fan_out]
worker = "slice"
max_workers = %d
[stages.slice]
allow_as_worker = true
require_output = true
[stages.slice.output]
format = "json"
`, c.at)), "bench")
			if err != nil {
				b.Fatal(err)
			}
			outs, err := blueprint.CompileOutputs(bp, outputspec.Levels{})
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("delay=%dms/%s", delay, c.name), func(b *testing.B) {
				dir := b.TempDir()
				b.ReportAllocs()
				for b.Loop() {
					turn := &testTurn{
						Engine: &engine.Engine{Models: oneModel{script.New("script:bench", parsed)}},
						Turn: &engine.Turn{
							RunID: "r", Agent: bp, Outputs: outs, Prompt: "go",
							UserModel: "script:bench", Workspace: &local.Workspace{Dir: dir},
						},
					}
					res := runTurn(context.Background(), turn, engine.SinkFunc(func(context.Context, engine.Event) error { return nil }))
					if res.Err != nil || len(res.Workers) != c.tasks || res.Workers[c.tasks-1].Status != engine.StatusAnswered {
						b.Fatalf("run %s: %v, workers %+v", res.Status, res.Err, res.Workers)
					}
				}
			})
		}
	}
}

// fanOutScript fans out n tasks, each worker answering after delay ms.
func fanOutScript(n, delay int) string {
	var sc strings.Builder
	sc.WriteString("[[turn]]\n[[turn.tool_calls]]\nname = \"fan_out\"\narguments = { tasks = [")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&sc, "{ prompt = \"slice %d\" },", i)
	}
	sc.WriteString("] }\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&sc, "[[turn]]\nfor = \"w%d\"\ndelay_ms = %d\ntext = \"working\"\n[[turn.tool_calls]]\nname = \"submit_output\"\narguments = { content = '{\"slice\": %d}' }\n", i, delay, i)
	}
	sc.WriteString("[[turn]]\ntext = \"merged\"\n")
	return sc.String()
}
