//go:build unix

package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/mcp/mcptest"
)

func TestShell(t *testing.T) {
	ws := newWS(t)
	ws.write(t, "hello.txt", "hi there\n")
	res := run(t, Shell{}, ws, `{"command": "cat hello.txt; echo oops >&2; pwd"}`)
	wantOK(t, res)
	for _, want := range []string{"Exit code 0.", "hi there", "oops", ws.Dir} {
		if !strings.Contains(res.Output, want) {
			t.Errorf("output lacks %q:\n%s", want, res.Output)
		}
	}
	if len(ws.asked) != 1 || ws.asked[0].Key != "shell" || ws.asked[0].ToolCall.Kind != "execute" || !strings.Contains(ws.asked[0].ToolCall.Title, "cat hello.txt") {
		t.Errorf("permission asked = %+v", ws.asked)
	}

	res = run(t, Shell{}, ws, `{"command": "read line; echo got=$line; exit 3"}`)
	wantError(t, res, "Exit code 3.", "got=")

	res = run(t, Shell{}, ws, `{"command": "printf 'no newline'"}`)
	wantOK(t, res)
	if !strings.HasSuffix(res.Output, "no newline\n") {
		t.Errorf("output %q", res.Output)
	}
	wantOK(t, run(t, Shell{}, ws, `{"command": "true"}`))
	wantError(t, run(t, Shell{}, ws, `{"command": "  "}`), "empty")
	wantError(t, run(t, Shell{}, ws, `{"command": "true", "timeout": 0}`), "timeout must be at least 1")
	wantError(t, run(t, Shell{}, ws, `{"command": "true", "timeout": 100000}`), "timeout must be at most 600")
}

func TestShell_Denied(t *testing.T) {
	ws := newWS(t)
	ws.allow = false
	res := run(t, Shell{}, ws, `{"command": "touch made"}`)
	wantError(t, res, "The user denied shell", "running `touch made`")
	if _, err := os.Stat(filepath.Join(ws.Dir, "made")); err == nil {
		t.Error("a denied command ran")
	}
}

// hangDetector is the context of a call that must end by itself: it ends
// only after a minute, which a loaded machine does not take and a hang
// does. A call it cut off is answered "cancelled", which the tests refuse.
func hangDetector(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func TestShell_TimeoutKillsAll(t *testing.T) {
	ws := newWS(t)
	// A command that never exits, with a child of its own that would
	// outlive a kill of the shell alone.
	res := runCtx(hangDetector(t), t, Shell{}, ws, `{"command": "echo started; sleep 1000 & echo child=$!; sleep 1000; echo never", "timeout": 1}`)
	wantError(t, res, "did not finish within 1s and was killed", "started")
	if strings.Contains(res.Output, "never") {
		t.Errorf("the command went on: %s", res.Output)
	}
	mcptest.WaitGone(t, shellPID(t, res.Output, "child="))
}

// A child left running in the background neither holds the call (it keeps
// the output open for 1000 s) nor outlives the command.
func TestShell_BackgroundChildDoesNotHoldTheCall(t *testing.T) {
	ws := newWS(t)
	res := runCtx(hangDetector(t), t, Shell{}, ws, `{"command": "sleep 1000 & echo child=$!"}`)
	wantOK(t, res)
	mcptest.WaitGone(t, shellPID(t, res.Output, "child="))
}

func TestShell_Cancel(t *testing.T) {
	ws := newWS(t)
	ctx, cancel := context.WithCancel(hangDetector(t))
	running := filepath.Join(t.TempDir(), "running")
	mcptest.Fifo(t, running)
	go func() {
		mcptest.ReadLine(t, running) // the command runs: cancel it
		cancel()
	}()
	res := runCtx(ctx, t, Shell{}, ws, fmt.Sprintf(`{"command": "echo yes > %s; sleep 1000"}`, running))
	wantError(t, res, "cancelled and killed")
	if errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
		t.Error("the hang detector fired: cancelling did not end the command")
	}
}

// shellPID reads the process id a command printed after prefix.
func shellPID(t *testing.T, output, prefix string) int {
	t.Helper()
	_, rest, ok := strings.Cut(output, prefix)
	if !ok {
		t.Fatalf("no %s in the output:\n%s", prefix, output)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(rest, "\n", 2)[0]))
	if err != nil {
		t.Fatalf("%s: %v", prefix, err)
	}
	return pid
}

func TestShell_OutputCapped(t *testing.T) {
	ws := newWS(t)
	res := run(t, Shell{}, ws, `{"command": "echo FIRST; head -c 200000 /dev/zero | tr '\\0' x; echo; echo LAST"}`)
	wantOK(t, res)
	if len(res.Output) > shellOutputLimit+500 {
		t.Errorf("output is %d bytes, the cap is %d", len(res.Output), shellOutputLimit)
	}
	for _, want := range []string{"FIRST", "LAST", "bytes of output cut", "the output was cut"} {
		if !strings.Contains(res.Output, want) {
			t.Errorf("capped output lacks %q", want)
		}
	}
}

// terminalWS runs commands "in an editor terminal".
type terminalWS struct {
	*testWS
	got engine.Command
}

func (w *terminalWS) RunCommand(_ context.Context, c engine.Command) (engine.CommandResult, error) {
	w.got = c
	c.Started("term-1")
	return engine.CommandResult{Output: "tail of it", Truncated: true, ExitCode: 0, TerminalID: "term-1"}, nil
}

func TestShell_EditorTerminal(t *testing.T) {
	ws := &terminalWS{testWS: newWS(t)}
	var progress []engine.ToolCallEvent
	call := &engine.Call{ID: "t-9", Args: json.RawMessage(`{"command": "make", "timeout": 5}`), Workspace: ws,
		Progress: func(ev engine.ToolCallEvent) { progress = append(progress, ev) }}
	res := Shell{}.Run(context.Background(), call)
	wantOK(t, res)
	if ws.got.Line != "make" || ws.got.Timeout != 5*time.Second || ws.got.Dir != ws.Dir || ws.got.OutputLimit != shellOutputLimit {
		t.Errorf("command = %+v", ws.got)
	}
	// First the approved call leaves "pending", then the terminal is shown.
	if len(progress) != 2 || progress[0].Status != engine.ToolInProgress ||
		progress[1].ID != "t-9" || len(progress[1].Content) != 1 || progress[1].Content[0].TerminalID != "term-1" {
		t.Errorf("progress = %+v", progress)
	}
	if len(res.Content) != 1 || res.Content[0].TerminalID != "term-1" {
		t.Errorf("content = %+v", res.Content)
	}
	if !strings.Contains(res.Output, "earlier output was cut") {
		t.Errorf("output %q", res.Output)
	}
}
