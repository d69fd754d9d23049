package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/provider/script"
	"github.com/coda-acp/coda/outputspec"
)

// noop is a tool that does nothing, so the benchmark measures the engine.
type noop struct{}

func (noop) Spec() engine.ToolSpec {
	return engine.ToolSpec{Name: "noop", Description: "does nothing", Schema: json.RawMessage(`{"type":"object"}`)}
}
func (noop) Kind() string { return "other" }
func (noop) Run(context.Context, *engine.Call) engine.ToolResult {
	return engine.ToolResult{Output: "ok"}
}

// BenchmarkRun_perModelCall measures the engine's own cost per model call:
// a run of N script-model turns, each streaming a little text and calling
// one tool, then a submission. The script model does no work beyond
// handing back its turn, so what is measured is the stage loop, events,
// tool dispatch and the run record.
func BenchmarkRun_perModelCall(b *testing.B) {
	const calls = 50
	var sc strings.Builder
	for i := 0; i < calls-1; i++ {
		sc.WriteString("[[turn]]\ntext = [\"looking \", \"around\"]\n[[turn.tool_calls]]\nname = \"noop\"\narguments = { n = 1 }\n")
	}
	sc.WriteString("[[turn]]\n[[turn.tool_calls]]\nname = \"submit_output\"\narguments = { content = '{\"ok\": true}' }\n")
	parsed, err := script.Parse([]byte(sc.String()), "bench")
	if err != nil {
		b.Fatal(err)
	}
	bp, err := engine.ParseBlueprint([]byte(fmt.Sprintf(`
[agent]
name = "bench"
[stages.answer]
mode = "output"
max_iterations = %d
available_tools = ["noop"]
[stages.answer.output]
format = "json"
`, calls+1)), "bench")
	if err != nil {
		b.Fatal(err)
	}
	outs, err := engine.CompileOutputs(bp, outputspec.Levels{})
	if err != nil {
		b.Fatal(err)
	}
	for _, records := range []bool{false, true} {
		b.Run(fmt.Sprintf("records=%v", records), func(b *testing.B) {
			dir := b.TempDir()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				turn := &engine.Turn{
					RunID: fmt.Sprintf("r-%d", i), Agent: bp, Outputs: outs, Prompt: "go",
					Models: oneModel{script.New("script:bench", parsed)}, UserModel: "script:bench",
					Tools: map[string]engine.Tool{"noop": noop{}}, Workspace: &engine.LocalWorkspace{Dir: dir},
				}
				if records {
					turn.StateDir = dir
				}
				res := engine.Run(context.Background(), turn, engine.SinkFunc(func(context.Context, engine.Event) error { return nil }))
				if res.Status != engine.StatusAnswered {
					b.Fatalf("run %s: %+v", res.Status, res.Err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*calls), "µs/call")
		})
	}
}
