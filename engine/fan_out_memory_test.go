package engine_test

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/coda-acp/coda/engine/llm"
)

// bigReplies stands in for a model whose workers reply at length: each
// worker's reply "BIG" becomes a fresh reply of size bytes. At each call it
// measures the live heap, after a collection: what the fan-out holds of the
// workers that ended.
type bigReplies struct {
	llm.Model
	size int

	mu   sync.Mutex
	peak uint64
}

func (m *bigReplies) Stream(ctx context.Context, req *llm.Request, onDelta func(llm.Delta) error) (*llm.Response, error) {
	resp, err := m.Model.Stream(ctx, req, onDelta)
	if err != nil || resp.Text != "BIG" {
		return resp, err
	}
	m.mu.Lock()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	m.peak = max(m.peak, ms.HeapAlloc)
	m.mu.Unlock()
	resp.Text = strings.Repeat(req.Caller.Name[:1], m.size-1) + "\n"
	return resp, nil
}

// 16 workers, 2 at a time, each replying 4 MiB: what the fan-out holds
// follows max_workers and report_bytes, not tasks × reply size, and the
// record keeps a clip of each reply, not the whole.
func TestFanOut_memoryFollowsLimits(t *testing.T) {
	const tasks, reply = 16, 4 << 20
	var script strings.Builder
	script.WriteString("[[turn]]\n[[turn.tool_calls]]\nname = \"fan_out\"\narguments = { tasks = [")
	for i := 1; i <= tasks; i++ {
		fmt.Fprintf(&script, "{ prompt = \"task %d\" },", i)
	}
	script.WriteString("] }\n")
	for i := 1; i <= tasks; i++ {
		fmt.Fprintf(&script, "[[turn]]\nfor = \"w%d\"\ntext = \"BIG\"\n", i)
	}
	script.WriteString("[[turn]]\ntext = \"Merged.\"\n")
	turn := newTurn(t, `
[agent]
name = "fan"
[stages.plan]
available_tools = ["fan_out"]
[stages.plan.fan_out]
worker = "check"
max_workers = 2
report_bytes = 1024
[stages.check]
allow_as_worker = true
max_revisits = 0
`, script.String())
	m := &bigReplies{Model: turn.Models.(oneModel).m, size: reply}
	turn.Models = oneModel{m}
	turn.IDs = ids()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	res := runTurn(context.Background(), turn, &events{})
	if res.Err != nil || len(res.Workers) != tasks {
		t.Fatalf("Run = %s (%v), %d workers", res.Status, res.Err, len(res.Workers))
	}
	held := m.peak - min(base, m.peak)
	var recorded int64
	filepath.WalkDir(turn.Store.RunDir(turn.RunID), func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				recorded += fi.Size()
			}
		}
		return nil
	})
	t.Logf("%d workers replying %d MiB, 2 at a time: %.1f MiB live at most during the fan-out, %.1f MiB of record",
		tasks, reply>>20, float64(held)/(1<<20), float64(recorded)/(1<<20))
	if held > 24<<20 {
		t.Errorf("the fan-out held %d MiB live: it keeps the workers' replies (%d × %d MiB)", held>>20, tasks, reply>>20)
	}
	if recorded > 64<<20 {
		t.Errorf("the record is %d MiB: it keeps the workers' whole replies", recorded>>20)
	}
}
