package engine_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/blueprint"
	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/local"
	"github.com/coda-acp/coda/engine/provider/script"
	"github.com/coda-acp/coda/outputspec"
	"github.com/coda-acp/coda/store"
)

// noop is a tool that does nothing, so the benchmark measures the engine.
type noop struct{}

func (noop) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: "noop", Description: "does nothing", Schema: json.RawMessage(`{"type":"object"}`)}
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
	bp, err := blueprint.Parse([]byte(fmt.Sprintf(`
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
	outs, err := blueprint.CompileOutputs(bp, outputspec.Levels{})
	if err != nil {
		b.Fatal(err)
	}
	for _, records := range []bool{false, true} {
		b.Run(fmt.Sprintf("records=%v", records), func(b *testing.B) {
			dir := b.TempDir()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				turn := &testTurn{
					Engine: &engine.Engine{Models: oneModel{script.New("script:bench", parsed)}, Tools: map[string]engine.Tool{"noop": noop{}}},
					Turn: &engine.Turn{
						RunID: fmt.Sprintf("r-%d", i), Agent: bp, Outputs: outs, Prompt: "go",
						UserModel: "script:bench", Workspace: &local.Workspace{Dir: dir},
					},
				}
				if records {
					turn.Store = store.New(dir)
				}
				res := runTurn(context.Background(), turn, engine.SinkFunc(func(context.Context, engine.Event) error { return nil }))
				if res.Status != engine.StatusAnswered {
					b.Fatalf("run %s: %+v", res.Status, res.Err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*calls), "µs/call")
		})
	}
}

// BenchmarkRun_firstUpdate measures a turn of a 20-turn session (each
// earlier turn a 4 KiB prompt and a 6 KiB answer) with and without its
// run record: the time from Run to the turn's first update
// (first-update-ns, the median of the turns: on this scale, a few µs, a
// mean is the few turns a GC, the scheduler or the machine's other work
// lands in; issue 14's target: with records ≤ 1.2× without), the heap
// objects allocated by then (first-update-allocs), the whole turn
// (ns/op), and the record's size per turn (record-B/turn), which names
// the earlier turns by run id instead of rewriting them.
//
// Run returns once its record is written (store.Run.Flush), so a turn
// with records starts right after its goroutine waited, idle, for the
// previous turn's files: on a slow disk a few ms, after which the next
// turn's first µs run on cold caches whatever they do (a time.Sleep of
// that length between turns without records costs as much).
// records=off,disk-between is the reference that shares that wait: between
// turns, outside the measured window, it has another goroutine make and
// write what a record of this turn makes and writes (writeLikeARecord),
// and waits for it.
//
// An editor's user sends the next prompt after seconds, not µs: there
// every turn starts cold. records=off,after-idle and records=on,after-idle
// leave the process idle for afterIdle between turns (outside the measured
// window; the timer waits for nothing), as that user would.
//
// scripts/bench/firstupdate.sh runs them alternately and prints the
// medians and the ratios of on to off.
func BenchmarkRun_firstUpdate(b *testing.B) {
	parsed, err := script.Parse([]byte("[[turn]]\ntext = \"The answer.\"\n"), "bench")
	if err != nil {
		b.Fatal(err)
	}
	bp, err := blueprint.Parse([]byte("[agent]\nname = \"bench\"\n[stages.answer]\nmode = \"output\"\n"), "bench")
	if err != nil {
		b.Fatal(err)
	}
	outs, err := blueprint.CompileOutputs(bp, outputspec.Levels{})
	if err != nil {
		b.Fatal(err)
	}
	var history []engine.Exchange
	for i := range 20 {
		history = append(history, engine.Exchange{
			Prompt: strings.Repeat(fmt.Sprintf("question %d ", i), 4<<10/12),
			Answer: strings.Repeat(fmt.Sprintf("answer %d ", i), 6<<10/10),
			RunID:  fmt.Sprintf("r-earlier-%d", i),
		})
	}
	for _, mode := range []string{"off", "off,disk-between", "on", "off,after-idle", "on,after-idle"} {
		b.Run("records="+mode, func(b *testing.B) {
			dir := b.TempDir()
			i := 0
			// turn runs the next turn; with count, it counts the heap
			// objects allocated before the first update (ReadMemStats
			// stops the world, so not in the turns timed).
			turn := func(count bool) (first time.Duration, objects uint64) {
				i++
				turn := &testTurn{
					Engine: &engine.Engine{Models: oneModel{script.New("script:bench", parsed)}},
					Turn: &engine.Turn{
						RunID: fmt.Sprintf("r-%d", i), SessionID: "s-1", Agent: bp, Outputs: outs, Prompt: "go", History: history,
						UserModel: "script:bench", Workspace: &local.Workspace{Dir: dir},
					},
				}
				switch mode {
				case "on", "on,after-idle":
					turn.Store = store.New(dir)
				case "off,disk-between":
					done := make(chan error)
					go func() { done <- writeLikeARecord(store.New(dir).RunDir(turn.RunID)) }()
					if err := <-done; err != nil {
						b.Fatal(err)
					}
				}
				if strings.HasSuffix(mode, ",after-idle") {
					<-time.NewTimer(afterIdle).C
				}
				var ms runtime.MemStats
				if count {
					runtime.ReadMemStats(&ms)
				}
				before := ms.Mallocs
				start, seen := time.Now(), false
				res := runTurn(context.Background(), turn, engine.SinkFunc(func(context.Context, engine.Event) error {
					if !seen {
						first, seen = time.Since(start), true
						if count {
							runtime.ReadMemStats(&ms)
							objects = ms.Mallocs - before
						}
					}
					return nil
				}))
				if res.Status != engine.StatusAnswered {
					b.Fatalf("run %s: %+v", res.Status, res.Err)
				}
				return first, objects
			}
			var firsts []time.Duration
			for b.Loop() {
				first, _ := turn(false)
				firsts = append(firsts, first)
			}
			b.ReportMetric(float64(median(firsts)), "first-update-ns")
			var counts []uint64
			for range 9 {
				_, n := turn(true)
				counts = append(counts, n)
			}
			b.ReportMetric(float64(median(counts)), "first-update-allocs")
			size := 0
			if strings.HasPrefix(mode, "on") {
				_ = filepath.WalkDir(store.New(dir).RunDir(fmt.Sprintf("r-%d", i)), func(_ string, d fs.DirEntry, err error) error {
					if err == nil && !d.IsDir() {
						if info, err := d.Info(); err == nil {
							size += int(info.Size())
						}
					}
					return nil
				})
			}
			b.ReportMetric(float64(size), "record-B/turn")
		})
	}
}

// afterIdle is the idle time before a turn of the ,after-idle
// sub-benchmarks: longer than a record's writing takes here, so that both
// start as cold.
const afterIdle = 20 * time.Millisecond

// writeLikeARecord makes and writes in dir what a record of
// BenchmarkRun_firstUpdate's turn does, as the record does: its three
// directories (MkdirAll as the record's writer does), and seven files of its sizes each through a temporary file
// and a rename, run.json twice.
func writeLikeARecord(dir string) error {
	stage := filepath.Join(dir, "stages", "001-answer@1")
	if err := os.MkdirAll(filepath.Dir(stage), 0o755); err != nil {
		return err
	}
	if err := os.Mkdir(stage, 0o755); err != nil {
		return err
	}
	files := []struct {
		path string
		size int
	}{
		{filepath.Join(dir, "run.json"), 250}, {filepath.Join(stage, "prompt.md"), 700},
		{filepath.Join(stage, "response.md"), 30}, {filepath.Join(stage, "status.json"), 300},
		{filepath.Join(stage, "last_response"), 11}, {filepath.Join(stage, "answer"), 11},
		{filepath.Join(dir, "run.json"), 600},
	}
	for _, f := range files {
		tmp, err := os.CreateTemp(filepath.Dir(f.path), "."+filepath.Base(f.path)+".*")
		if err != nil {
			return err
		}
		_, err = tmp.Write(bytes.Repeat([]byte("x"), f.size))
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(tmp.Name(), f.path)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func median[T cmp.Ordered](s []T) T {
	slices.Sort(s)
	return s[len(s)/2]
}
