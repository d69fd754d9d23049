package tools

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/coda-acp/coda/engine"
)

// Timeouts for shell, in seconds, and the output it keeps.
const (
	shellDefaultTimeout = 120
	shellMaxTimeout     = 600
	shellOutputLimit    = 32 << 10
)

// Shell runs a shell command line in the working directory, with the user's
// permission: in an editor terminal when the editor offers one, else as a
// local process.
type Shell struct{}

var shellParams = params{
	{Name: "command", Type: "string", Required: true, Description: "The command line, run by the system shell (`sh -c`; `cmd.exe /C` on Windows) in the working directory."},
	{Name: "timeout", Type: "integer", Min: bound(1), Max: bound(shellMaxTimeout), Description: fmt.Sprintf("Seconds before the command is killed (default %d, at most %d).", shellDefaultTimeout, shellMaxTimeout)},
}

type shellArgs struct {
	Command string `json:"command"`
	Timeout *int64 `json:"timeout"`
}

// shellCallTitle is what a call is about, for the editor.
func shellCallTitle(a shellArgs) (string, []engine.Location) {
	return shellTitle(a.Command), nil
}

func shellTitle(cmd string) string {
	cmd = strings.TrimSpace(cmd)
	if i := strings.IndexByte(cmd, '\n'); i >= 0 {
		cmd = cmd[:i] + " …"
	}
	return "Run " + clip([]byte(cmd), 120)
}

func (Shell) Run(ctx context.Context, call *engine.Call) engine.ToolResult {
	var a shellArgs
	if err := shellParams.decode(call.Args, &a); err != nil {
		return engine.Errorf("shell: %v", err)
	}
	if strings.TrimSpace(a.Command) == "" {
		return engine.Errorf("shell: the command is empty")
	}
	timeout := time.Duration(shellDefaultTimeout) * time.Second
	if a.Timeout != nil {
		timeout = time.Duration(*a.Timeout) * time.Second
	}
	ws := call.Workspace
	title := shellTitle(a.Command)
	if denied := ask(ctx, call, "shell", title, fmt.Sprintf("running `%s`", a.Command), nil, nil); denied != nil {
		return *denied
	}

	started := func(id string) {
		call.Progress(engine.ToolCallEvent{
			ID:      call.ID,
			Title:   title,
			Kind:    kindOf("shell"),
			Status:  engine.ToolInProgress,
			Content: []engine.ToolContent{{TerminalID: id}},
		})
	}
	res, err := ws.RunCommand(ctx, engine.Command{
		Line:        a.Command,
		Dir:         ws.Cwd(),
		Timeout:     timeout,
		OutputLimit: shellOutputLimit,
		Started:     started,
	})

	var b strings.Builder
	failed := true
	switch {
	case err != nil && ctx.Err() != nil:
		b.WriteString("The command was cancelled and killed.\n")
	case err != nil:
		r := engine.Errorf("shell: the command could not be run: %v", err)
		r.Title = title
		return r
	case res.TimedOut:
		fmt.Fprintf(&b, "The command did not finish within %s and was killed.\n", timeout)
	case res.Signal != "":
		fmt.Fprintf(&b, "The command was killed by signal %s.\n", res.Signal)
	case res.ExitCode != 0:
		fmt.Fprintf(&b, "Exit code %d.\n", res.ExitCode)
	default:
		failed = false
		b.WriteString("Exit code 0.\n")
	}
	switch {
	case res.Output == "":
		b.WriteString("(no output)\n")
	default:
		if res.Truncated && res.CutBytes == 0 {
			b.WriteString("[earlier output was cut; the last part follows]\n")
		}
		b.WriteString(res.Output)
		if !strings.HasSuffix(res.Output, "\n") {
			b.WriteByte('\n')
		}
		if res.CutBytes > 0 {
			fmt.Fprintf(&b, "[the output was cut: %d bytes in the middle are not shown]\n", res.CutBytes)
		}
	}
	out := engine.ToolResult{Output: b.String(), IsError: failed, Title: title, Sources: commandSources(ws.Cwd(), a.Command, res.Output)}
	if res.TerminalID != "" {
		out.Content = []engine.ToolContent{{TerminalID: res.TerminalID}}
	}
	return out
}
