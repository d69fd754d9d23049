package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/blueprint"
	"github.com/coda-acp/coda/engine/local"
	"github.com/coda-acp/coda/engine/taint"
	"github.com/coda-acp/coda/internal/bytesize"
	"github.com/coda-acp/coda/internal/telemetry"
	"github.com/coda-acp/coda/internal/textcut"
	"github.com/coda-acp/coda/outputspec"
	"github.com/coda-acp/coda/store"
)

// runFlags are `coda run`'s flags: the launch's, and its own.
type runFlags struct {
	launchFlags
	raw, asJSON, yes, detach bool
	cwd                      string
}

func (f *runFlags) register(fs *flag.FlagSet) {
	f.launchFlags.register(fs)
	fs.BoolVar(&f.raw, "raw", false, "print the answer's bytes alone")
	fs.BoolVar(&f.asJSON, "json", false, "print the answer record as JSON")
	fs.StringVar(&f.cwd, "cwd", "", "the working directory (default: the current one)")
	fs.BoolVar(&f.yes, "yes", false, "approve every permission request")
	fs.BoolVar(&f.detach, "detach", false, "run in a process of its own: print the run id and return at once (coda ps, coda result RUN --wait, coda cancel RUN)")
}

// parseRun parses `coda run`'s arguments: its flags, and the task.
func parseRun(args []string) (*runFlags, string, error) {
	var f runFlags
	fs := newFlagSet("run")
	f.register(fs)
	rest, err := parseArgs(fs, args)
	if err != nil {
		return nil, "", err
	}
	if f.raw && f.asJSON {
		return nil, "", usageError("--raw and --json: choose one")
	}
	task := strings.TrimSpace(strings.Join(rest, " "))
	if task == "" {
		return nil, "", usageError("run needs a task: coda run [flags] TASK...")
	}
	return &f, task, nil
}

// runOnce is `coda run`: one turn without an editor. The answer goes to
// stdout; progress goes to stderr. With --detach the turn runs in a
// process of its own (detach.go). On a terminal (stdin), the model can ask
// the user (ask.go).
func runOnce(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	f, task, err := parseRun(args)
	if err != nil {
		return err
	}
	return runTask(ctx, f, task, withoutDetach(args), nil, stdin, stdout, stderr)
}

// runTask runs task as `coda run` does, args being how it was asked (kept
// in its record's launch.json for `coda resume`), or takes up the run rs
// names again (resume.go). With --detach it starts the process that runs
// it, once the launch is checked. When stdin is a terminal (and the run is
// not detached) the model's ask_user asks on it; a nil stdin asks nothing.
func runTask(ctx context.Context, f *runFlags, task string, args []string, rs *resumed, stdin io.Reader, stdout, stderr io.Writer) error {
	progress := &terminalSink{w: stderr}
	// Logs on stderr start on a line of their own, not after streamed text.
	l, err := f.prepare(progress.logWriter(), false)
	if err != nil {
		return err
	}
	defer l.closeLog()
	e := l.Engine
	runID := ""
	if rs != nil {
		if err := rs.check(l); err != nil {
			return err
		}
		runID = rs.id
	}
	child := detachedChild()
	switch {
	case child != nil && rs == nil:
		runID = child.runID // its directory claimed by the process that started it
	case rs == nil:
		// A record of its own, whatever other processes start meanwhile.
		if runID, err = e.Store.ClaimRun(func() string { return e.NewID("r") }); err != nil {
			l.log.Debug("making the run's record", "err", err)
			runID = e.NewID("r") // its record's failure is a warning of the run
		}
	}
	if rs == nil && child == nil {
		recordLaunch(e.Store, runID, args, l)
	}
	if f.detach {
		argv := append([]string{"run"}, args...)
		if rs != nil {
			argv = rs.argv
		}
		return detach(e.Store, runID, argv, stdout)
	}
	e.Store.Detached = child != nil
	// One process runs a run: a second `coda resume` of it is refused
	// while the first holds its lock.
	release, held, err := e.Store.LockRun(runID)
	switch {
	case held:
		return &exitError{code: 1, msg: fmt.Sprintf("run %s is being run by another process", runID)}
	case err != nil:
		l.log.Debug("locking the run's record", "err", err)
	default:
		defer release()
	}
	if f.logFile == "" {
		// The run's warnings are printed once, at the end.
		e.Log = slog.New(withoutWarnings{l.log.Handler()})
	}
	// Nobody is there to ask: the taint gate's `ask` denies, unless --yes.
	e.Taint.Unattended, e.Taint.Waive = true, f.yes
	// The --output-* paths were typed here, whatever --cwd says.
	outs, err := blueprint.CompileOutputs(l.Agent, outputspec.Levels{Launch: &outputspec.Level{Dir: l.LaunchDir, Spec: l.Launch}})
	if err != nil {
		return err
	}
	if f.cwd != "" {
		if l.LaunchDir, err = filepath.Abs(f.cwd); err != nil {
			return err
		}
	}
	ws := &local.Workspace{Dir: l.LaunchDir}
	if f.yes {
		ws.Approve = func(context.Context, engine.PermissionRequest) (bool, error) { return true, nil }
	}
	var workspace engine.Workspace = ws
	if child == nil && isTerminal(stdin) {
		// Someone is at the terminal: ask_user is offered, and asks there.
		workspace = askingWorkspace{ws, newTerminalAsker(stdin, progress)}
	}
	// The private files a walk found, kept for the next run in this
	// workspace, which then walks it only if a folder changed.
	var keep string
	if e.Store.Dir() != "" {
		keep = filepath.Join(e.Store.Dir(), "private")
	}
	turn := &engine.Turn{
		RunID: runID, Agent: l.Agent, Outputs: outs, Prompt: task,
		UserModel: l.UserModel, DefaultModel: l.Models.Default(false), UserEffort: l.UserEffort, Workspace: workspace,
		Checkpoints: true,
		Private:     taint.OpenIndex(keep), // and its note when the workspace is too large to look through
	}
	if rs != nil {
		turn.Resume = rs.from
	}
	if child != nil {
		child.ready(e.Store, turn)
	}
	// A pipeline's trace context, as the environment carries it
	// (OpenTelemetry's TRACEPARENT and TRACESTATE): the run's span's parent.
	ctx = telemetry.WithParent(ctx, os.Getenv("TRACEPARENT"), os.Getenv("TRACESTATE"))
	res := e.Run(ctx, turn, progress)
	// The record is the answer `coda result` finds: written before it is
	// printed.
	res.Recorded()
	progress.endLine()
	for _, w := range res.Warnings {
		fmt.Fprintln(stderr, "coda: warning: "+w)
	}
	printSpend(stderr, res.Usage)
	// --json prints the record of every run that started, so a pipeline
	// always gets one JSON object; the exit status still says how it ended.
	switch {
	case f.asJSON:
		if err := printAnswer(stdout, withUsage(res.Record(), &res.Usage), false, true, false); err != nil {
			return err
		}
	case res.Answer != nil:
		if err := printAnswer(stdout, res.Answer, f.raw, false, false); err != nil {
			return err
		}
	}
	return runEnd(stderr, res)
}

// recordLaunch keeps in the run's record how it was launched, for `coda
// resume`: a record that cannot be written is the run's own warning, later.
func recordLaunch(st *store.Store, runID string, args []string, l *launch) {
	if st == nil {
		return
	}
	abs, err := filepath.Abs(st.Dir())
	if err == nil {
		err = st.WriteLaunch(runID, &store.Launch{Args: args, Dir: l.LaunchDir, StateDir: abs, Agent: l.Agent.Agent.Name, Blueprint: engine.BlueprintHash(l.Agent)})
	}
	if err != nil {
		l.log.Debug("writing the run's launch.json", "err", err)
	}
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
	shown  int    // bytes of it shown
	cut    bool   // the rest of it is not shown
	total  int    // bytes of the run's commentary shown
	quiet  bool   // the run's commentary is past its bound
	max    int    // shown of a message: shownPerMessage unless a test sets it; of a run, 16 times it
}

// What stderr shows of the model's commentary: the first 64 KiB of each
// message, a terminal's worth of scrolling, and 1 MiB of a run, what a
// CI job's log keeps readable; past either a line says so. The model's
// text is the record's (response.md) and the answer is stdout's, so what
// is left out of stderr is only its echo: a runaway reply of gigabytes
// no longer fills a job's log.
const shownPerMessage = 64 << 10

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
			t.msgID, t.shown, t.cut = ev.MessageID, 0, false
		}
		t.showText(ev.Text)
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

// showText writes text of the model message being shown, as much as the
// message's and the run's bounds leave room for; the first piece that
// passes one is cut, with a line saying so, and the rest of the message
// (or of the run's commentary) is left out.
func (t *terminalSink) showText(text string) {
	if t.cut || t.quiet {
		return
	}
	per := t.max
	if per <= 0 {
		per = shownPerMessage
	}
	room, runBound := per-t.shown, false
	if left := 16*per - t.total; left <= room {
		room, runBound = left, true
	}
	shown := textcut.At(text, room)
	io.WriteString(t.w, shown)
	t.shown += len(shown)
	t.total += len(shown)
	if shown != "" {
		t.inLine = !strings.HasSuffix(shown, "\n")
	}
	if len(shown) < len(text) {
		t.endLineLocked()
		what := "this message"
		if runBound {
			what, t.quiet = "the run's commentary", true
		}
		t.cut = true
		fmt.Fprintf(t.w, "[… the rest of %s is not shown here (%s a message, %s a run): the run's record has it]\n",
			what, bytesize.Format(per), bytesize.Format(16*per))
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}
