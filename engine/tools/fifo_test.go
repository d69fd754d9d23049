//go:build unix

package tools

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coda-acp/coda/engine"
)

// A FIFO blocks whoever opens it until a writer comes; the tools must refuse
// or skip it without opening it.
func TestTools_FIFO(t *testing.T) {
	ws := newWS(t)
	ws.write(t, "dir/a.txt", "needle\n")
	if err := syscall.Mkfifo(filepath.Join(ws.Dir, "dir", "pipe"), 0o644); err != nil {
		t.Skipf("cannot make a FIFO: %v", err)
	}
	calls := []struct {
		name string
		tool runner
		args string
		ok   bool
		want string
	}{
		{"read_file", ReadFile{}, `{"path": "dir/pipe"}`, false, "dir/pipe is not a regular file"},
		{"write_file", WriteFile{}, `{"path": "dir/pipe", "content": "x"}`, false, "dir/pipe is not a regular file"},
		{"edit_file", EditFile{}, `{"path": "dir/pipe", "old": "a", "new": "b"}`, false, "dir/pipe is not a regular file"},
		{"grep a tree", Grep{}, `{"pattern": "needle", "path": "dir"}`, true, "1 matches in 1 files"},
		{"grep the FIFO", Grep{}, `{"pattern": "needle", "path": "dir/pipe"}`, false, "dir/pipe is not a regular file"},
	}
	for _, c := range calls {
		done := make(chan engine.ToolResult, 1)
		go func() { done <- run(t, c.tool, ws, c.args) }()
		select {
		case res := <-done:
			if c.ok {
				wantOK(t, res)
			} else {
				wantError(t, res)
			}
			if !strings.Contains(res.Output, c.want) {
				t.Errorf("%s: %q does not say %q", c.name, res.Output, c.want)
			}
		case <-time.After(time.Minute): // a hang detector
			t.Fatalf("%s hangs on a FIFO", c.name)
		}
	}
	if len(ws.asked) != 0 {
		t.Errorf("a refused change asked for permission: %v", ws.asked)
	}
}
