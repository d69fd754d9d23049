package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coda-acp/coda/engine"
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

func TestShell_TimeoutKillsAll(t *testing.T) {
	ws := newWS(t)
	start := time.Now()
	// A command that never exits, with a child of its own that would
	// outlive a kill of the shell alone.
	res := run(t, Shell{}, ws, `{"command": "echo started; sleep 1000 & sleep 1000; echo never", "timeout": 1}`)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("a 1 s timeout took %s", d)
	}
	wantError(t, res, "did not finish within 1s and was killed", "started")
	if strings.Contains(res.Output, "never") {
		t.Errorf("the command went on: %s", res.Output)
	}
}

func TestShell_BackgroundChildDoesNotHoldTheCall(t *testing.T) {
	ws := newWS(t)
	marker := filepath.Join(ws.Dir, "late")
	start := time.Now()
	res := run(t, Shell{}, ws, fmt.Sprintf(`{"command": "(sleep 3; touch %s) & echo done"}`, marker))
	wantOK(t, res)
	// Held, the call would last the child's 3 s; anything under that is not.
	if d := time.Since(start); d > 2500*time.Millisecond {
		t.Errorf("a background child held the call for %s", d)
	}
	time.Sleep(3500*time.Millisecond - time.Since(start))
	if _, err := os.Stat(marker); err == nil {
		t.Error("a background child outlived the command")
	}
}

func TestShell_Cancel(t *testing.T) {
	ws := newWS(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	res := runCtx(ctx, t, Shell{}, ws, `{"command": "sleep 1000"}`)
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("cancel took %s", d)
	}
	wantError(t, res, "cancelled and killed")
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
