package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/blueprint"
	"github.com/coda-acp/coda/engine/local"
	"github.com/coda-acp/coda/engine/taint"
	"github.com/coda-acp/coda/outputspec"
	"github.com/coda-acp/coda/store"
)

// runOnce is `coda run`: one turn without an editor. The answer goes to
// stdout; progress goes to stderr.
func runOnce(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f launchFlags
	var raw, asJSON, yes bool
	var cwd string
	fs := newFlagSet("run")
	f.register(fs)
	fs.BoolVar(&raw, "raw", false, "print the answer's bytes alone")
	fs.BoolVar(&asJSON, "json", false, "print the answer record as JSON")
	fs.StringVar(&cwd, "cwd", "", "the working directory (default: the current one)")
	fs.BoolVar(&yes, "yes", false, "approve every permission request")
	rest, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if raw && asJSON {
		return usageError("--raw and --json: choose one")
	}
	task := strings.TrimSpace(strings.Join(rest, " "))
	if task == "" {
		return usageError("run needs a task: coda run [flags] TASK...")
	}
	progress := &terminalSink{w: stderr}
	// Logs on stderr start on a line of their own, not after streamed text.
	l, err := f.prepare(progress.logWriter(), false)
	if err != nil {
		return err
	}
	defer l.closeLog()
	e := l.Engine
	if f.logFile == "" {
		// The run's warnings are printed once, at the end.
		e.Log = slog.New(withoutWarnings{l.log.Handler()})
	}
	// Nobody is there to ask: the taint gate's `ask` denies, unless --yes.
	e.Taint.Unattended, e.Taint.Waive = true, yes
	// The --output-* paths were typed here, whatever --cwd says.
	outs, err := blueprint.CompileOutputs(l.Agent, outputspec.Levels{Launch: &outputspec.Level{Dir: l.LaunchDir, Spec: l.Launch}})
	if err != nil {
		return err
	}
	if cwd != "" {
		if l.LaunchDir, err = filepath.Abs(cwd); err != nil {
			return err
		}
	}
	ws := &local.Workspace{Dir: l.LaunchDir}
	if yes {
		ws.Approve = func(context.Context, engine.PermissionRequest) (bool, error) { return true, nil }
	}
	res := e.Run(ctx, &engine.Turn{
		RunID: e.NewID("r"), Agent: l.Agent, Outputs: outs, Prompt: task,
		UserModel: l.UserModel, DefaultModel: l.DefaultModel, UserEffort: l.UserEffort, Workspace: ws,
		Private: taint.NewIndex(), // for its note when the workspace is too large to look through
	}, progress)
	// The record is the answer `coda result` finds: written before it is
	// printed.
	res.Recorded()
	progress.endLine()
	for _, w := range res.Warnings {
		fmt.Fprintln(stderr, "coda: warning: "+w)
	}
	// --json prints the record of every run that started, so a pipeline
	// always gets one JSON object; the exit status still says how it ended.
	switch {
	case asJSON:
		if err := printAnswer(stdout, res.Record(), false, true, false); err != nil {
			return err
		}
	case res.Answer != nil:
		if err := printAnswer(stdout, res.Answer, raw, false, false); err != nil {
			return err
		}
	}
	return runEnd(stderr, res)
}

// runEnd ends `coda run` with the run's id on stderr, in a line of its own
// when it answered, else in the error that gives the exit status: 1
// failed or cancelled, 3 no answer, 4 the answer declared unavailable.
func runEnd(stderr io.Writer, res *engine.Result) error {
	id := res.RunID
	switch {
	case res.Err != nil:
		return &exitError{code: 1, msg: fmt.Sprintf("run %s failed: %v", id, res.Err)}
	case res.Status == engine.StatusCancelled:
		return &exitError{code: 1, msg: fmt.Sprintf("run %s was cancelled", id)}
	case res.Status == engine.StatusUnavailable:
		return &exitError{code: 4, msg: fmt.Sprintf("run %s: the model declared the answer unavailable: %s", id, res.Unavailable)}
	case res.Answer == nil:
		return &exitError{code: 3, msg: fmt.Sprintf("run %s finished without an answer (%s): %s", id, res.Status, res.NoAnswer)}
	}
	line := fmt.Sprintf("coda: run %s answered", id)
	if len(res.Answer.Flags) > 0 {
		line += " (" + strings.Join(res.Answer.Flags, ", ") + ")"
	}
	_, err := fmt.Fprintln(stderr, line)
	return err
}

// printAnswer prints an answer: its bytes (--raw), its record (--json), or
// by default with a heading naming the run and stage when heading is set.
func printAnswer(w io.Writer, a *store.Answer, raw, asJSON, heading bool) error {
	switch {
	case raw:
		_, err := io.WriteString(w, a.Content)
		return err
	case asJSON:
		b, err := store.MarshalRecord(a)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}
	if heading {
		fmt.Fprintf(w, "# run %s · stage %s · %s", a.RunID, a.Stage, a.Format)
		if len(a.Flags) > 0 {
			fmt.Fprintf(w, " · flags: %s", strings.Join(a.Flags, ", "))
		}
		fmt.Fprint(w, "\n\n")
	}
	_, err := io.WriteString(w, a.Content)
	if err == nil && !strings.HasSuffix(a.Content, "\n") {
		_, err = io.WriteString(w, "\n")
	}
	return err
}

// terminalSink shows a run's progress on stderr.
type terminalSink struct {
	w      io.Writer
	mu     sync.Mutex // the sink's lines and the log's share w
	inLine bool
	msgID  string // the model message being shown
}

func (t *terminalSink) endLine() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.endLineLocked()
}

func (t *terminalSink) endLineLocked() {
	if t.inLine {
		fmt.Fprintln(t.w)
		t.inLine = false
	}
}

// logWriter is stderr for the log: each record starts on a line of its
// own, not after a model message being streamed.
func (t *terminalSink) logWriter() io.Writer {
	return writerFunc(func(p []byte) (int, error) {
		t.mu.Lock()
		defer t.mu.Unlock()
		t.endLineLocked()
		return t.w.Write(p)
	})
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// withoutWarnings drops the log records of a run's warnings
// (engine.LogWarning), which `coda run` prints itself at the end.
type withoutWarnings struct{ slog.Handler }

func (h withoutWarnings) Handle(ctx context.Context, r slog.Record) error {
	warning := false
	r.Attrs(func(a slog.Attr) bool {
		warning = a.Key == engine.LogWarning
		return !warning
	})
	if warning {
		return nil
	}
	return h.Handler.Handle(ctx, r)
}

func (h withoutWarnings) WithAttrs(attrs []slog.Attr) slog.Handler {
	return withoutWarnings{h.Handler.WithAttrs(attrs)}
}

func (h withoutWarnings) WithGroup(name string) slog.Handler {
	return withoutWarnings{h.Handler.WithGroup(name)}
}

func (t *terminalSink) Emit(_ context.Context, ev engine.Event) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch ev.Kind {
	case engine.EventText:
		if ev.MessageID != t.msgID {
			t.endLineLocked() // each model message starts on a line of its own
			t.msgID = ev.MessageID
		}
		io.WriteString(t.w, ev.Text)
		t.inLine = !strings.HasSuffix(ev.Text, "\n")
	case engine.EventToolCall:
		t.endLineLocked()
		fmt.Fprintf(t.w, "→ %s\n", ev.ToolCall.Title)
	case engine.EventToolCallUpdate:
		if w := ev.Worker; w != nil {
			t.endLineLocked()
			if w.Failed == "" {
				fmt.Fprintf(t.w, "  ✓ %s (%s)\n", w.Name, w.Task)
			} else {
				fmt.Fprintf(t.w, "  ✗ %s (%s): %s\n", w.Name, w.Task, firstLine(w.Failed))
			}
		}
		if ev.ToolCall.Status == engine.ToolFailed {
			t.endLineLocked()
			for _, c := range ev.ToolCall.Content {
				if c.Text != "" {
					fmt.Fprintf(t.w, "  ✗ %s\n", firstLine(c.Text))
				}
			}
		}
	case engine.EventPlan:
		for _, e := range ev.Plan {
			if e.Content == ev.Stage && e.Status == engine.PlanInProgress {
				t.endLineLocked()
				fmt.Fprintf(t.w, "[stage %s]\n", ev.Stage)
			}
		}
	}
	return nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}
