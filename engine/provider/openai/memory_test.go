package openai

import (
	"bufio"
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/blueprint"
	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/local"
	"github.com/coda-acp/coda/outputspec"
	"github.com/coda-acp/coda/store"
)

// peakMemoryLimit is what a turn may take at its peak, whole process, with
// an 8 MiB tool argument (the bound).
const peakMemoryLimit = 100 << 20

// A turn whose model streams an 8 MiB submit_output stays under 100 MB at
// its peak, the whole test process included: the arguments are cut while
// they stream, and neither the editor's events nor the run record get
// more than their head. Measured as the peak resident set (VmHWM) of a
// child process that runs one such turn, so nothing else counts.
func TestRun_peakMemory(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads the peak resident set from /proc/self/status")
	}
	if raceEnabled {
		t.Skip("the race detector's shadow memory would be measured too")
	}
	for _, mode := range []string{"deltas", "one-chunk"} {
		t.Run(mode, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestRun_peakMemoryChild$", "-test.v")
			cmd.Env = append(os.Environ(), "CODA_PEAK_MEMORY="+mode)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("child: %v\n%s", err, out)
			}
			_, after, ok := bytes.Cut(out, []byte("VmHWM:"))
			if !ok {
				t.Fatalf("the child reported no peak:\n%s", out)
			}
			kb, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(string(bytes.SplitN(after, []byte("\n"), 2)[0])), "kB")))
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("peak resident set with an 8 MiB argument (%s): %.1f MB", mode, float64(kb)/1024)
			if kb<<10 > peakMemoryLimit {
				t.Errorf("peak %d kB, over %d MB", kb, peakMemoryLimit>>20)
			}
		})
	}
}

// TestRun_peakMemoryChild is the child of TestRun_peakMemory: one turn
// against a server streaming an 8 MiB submit_output, then a short one.
func TestRun_peakMemoryChild(t *testing.T) {
	mode := os.Getenv("CODA_PEAK_MEMORY")
	if mode == "" {
		t.Skip("run by TestRun_peakMemory")
	}
	piece := 1000
	if mode == "one-chunk" {
		piece = 0
	}
	big := argsServer(t, blueprint.ToolSubmitOutput, 8<<20, piece)
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			big.Config.Handler.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte(`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c2","function":{"name":"submit_output","arguments":"{\"content\":\"Short.\"}"}}]},"finish_reason":"tool_calls"}]}` + "\n\ndata: [DONE]\n\n"))
	}))
	defer srv.Close()

	b, err := blueprint.Parse([]byte("[stages.answer]\nmode = \"output\"\n"), "mem")
	if err != nil {
		t.Fatal(err)
	}
	outs, err := blueprint.CompileOutputs(b, outputspec.Levels{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	model := New("m", Options{BaseURL: srv.URL})
	e := &engine.Engine{Models: models{model}, Store: store.New(dir)}
	turn := &engine.Turn{
		RunID: "mem", Agent: b, Outputs: outs, Prompt: "Go.", UserModel: "openai:m",
		Workspace: &local.Workspace{Dir: dir},
	}
	var shown int
	res := e.Run(context.Background(), turn, sinkFunc(func(_ context.Context, ev engine.Event) error {
		if ev.Kind == engine.EventToolCall {
			shown += len(ev.ToolCall.RawInput)
		}
		return nil
	}))
	res.Recorded()
	if res.Status != engine.StatusAnswered || res.Answer.Content != "Short." || shown > 4<<10 {
		t.Fatalf("Run = %s (%v), answer %+v, %d bytes of rawInput shown", res.Status, res.Err, res.Answer, shown)
	}
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "VmHWM:") {
			t.Log(sc.Text())
			os.Stdout.WriteString(sc.Text() + "\n")
		}
	}
}

type models struct{ m llm.Model }

func (m models) Model(string) (llm.Model, error) { return m.m, nil }

// sinkFunc adapts a function to an engine.Sink.
type sinkFunc func(ctx context.Context, ev engine.Event) error

func (f sinkFunc) Emit(ctx context.Context, ev engine.Event) error { return f(ctx, ev) }
