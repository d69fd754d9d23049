// Package editor is the editor as a session's engine.Workspace over ACP:
// files read and written through fs/*, commands run in its terminals
// (terminal/*), permission asked with session/request_permission, the user
// asked with elicitation/create (ask.go); the disk and local processes
// (engine/local) where the client advertises none of them. Its calls go
// through the connection (jsonrpc.Conn.Call), from a turn's goroutine.
package editor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/local"
	"github.com/coda-acp/coda/internal/jsonrpc"
	"github.com/coda-acp/coda/internal/proc"
	"github.com/coda-acp/coda/internal/rootfs"
)

// Workspace is a session's engine.Workspace over ACP: it reads and
// writes files through the editor (fs/read_text_file, fs/write_text_file)
// and runs commands in its terminals (terminal/*) when the client advertises
// them, and falls back to the disk and local processes when it does not.
// Permission is always asked with session/request_permission; "allow
// always" is remembered for the session, per tool.
//
// Its methods call the client and wait for the answer, so they must run off
// the connection's read loop (in a prompt turn's goroutine), never in a
// handler.
type Workspace struct {
	conn      Caller
	sessionID string
	caps      clientCaps
	local     local.Workspace // the disk and local processes
	// timeout bounds each file and terminal call (Options.Timeout).
	timeout  time.Duration
	toolCall func(*engine.ToolCallEvent) json.RawMessage

	// AutoApprove, when set, allows a request without asking: the
	// session's mode (acp's modes.go). Set it before the first turn.
	AutoApprove func(engine.PermissionRequest) bool

	mu     sync.Mutex
	always map[string]bool // permission keys the user allowed always
}

// clientCaps is what of clientCapabilities the workspace uses.
type clientCaps struct {
	readTextFile, writeTextFile, terminal bool
	// elicitForm: the client takes elicitation/create in form mode
	// (clientCapabilities.elicitation.form; ask.go).
	elicitForm bool
}

// cancelledCleanupTimeout bounds the calls that tidy up an editor terminal
// (kill, output, release) once the turn was cancelled: they still run, but
// must not hold up the turn's "cancelled" answer for long.
const cancelledCleanupTimeout = 5 * time.Second

// A Caller calls the editor and waits for its answer (jsonrpc.Conn.Call).
type Caller interface {
	Call(ctx context.Context, method string, params, result any) error
}

// Options say what a session's Workspace reaches.
type Options struct {
	Conn       Caller
	SessionID  string
	Cwd        string
	Additional []string        // the session's additionalDirectories
	ClientCaps json.RawMessage // initialize's clientCapabilities
	// Timeout bounds each file and terminal call (acp's
	// Options.EditorTimeout).
	Timeout time.Duration
	// ToolCall encodes a tool call as session/update does (acp's
	// updates.go): what a permission request shows.
	ToolCall func(*engine.ToolCallEvent) json.RawMessage
}

// New is a session's workspace.
func New(o Options) *Workspace {
	return &Workspace{
		conn:      o.Conn,
		sessionID: o.SessionID,
		caps:      parseClientCaps(o.ClientCaps),
		local:     local.Workspace{Dir: o.Cwd, Extra: append([]string(nil), o.Additional...)},
		timeout:   o.Timeout,
		toolCall:  o.ToolCall,
		always:    map[string]bool{},
	}
}

// parseClientCaps reads clientCapabilities as the schema asks: a field of
// the wrong type counts as its default (false), never as an error.
func parseClientCaps(raw json.RawMessage) clientCaps {
	var c clientCaps
	var top map[string]json.RawMessage
	if json.Unmarshal(raw, &top) != nil {
		return c
	}
	var fs map[string]json.RawMessage
	if json.Unmarshal(top["fs"], &fs) == nil {
		_ = json.Unmarshal(fs["readTextFile"], &c.readTextFile)
		_ = json.Unmarshal(fs["writeTextFile"], &c.writeTextFile)
	}
	_ = json.Unmarshal(top["terminal"], &c.terminal)
	var elicitation map[string]json.RawMessage
	if json.Unmarshal(top["elicitation"], &elicitation) == nil {
		var form map[string]json.RawMessage
		c.elicitForm = json.Unmarshal(elicitation["form"], &form) == nil && form != nil
	}
	return c
}

func (w *Workspace) Cwd() string     { return w.local.Cwd() }
func (w *Workspace) Roots() []string { return w.local.Roots() }

// The wire shapes of the client methods.
type (
	readTextFileParams struct {
		SessionID string `json:"sessionId"`
		Path      string `json:"path"`
	}
	readTextFileResult struct {
		Content string `json:"content"`
	}
	writeTextFileParams struct {
		SessionID string `json:"sessionId"`
		Path      string `json:"path"`
		Content   string `json:"content"`
	}
	permissionParams struct {
		SessionID string             `json:"sessionId"`
		ToolCall  json.RawMessage    `json:"toolCall"`
		Options   []permissionOption `json:"options"`
	}
	permissionOption struct {
		OptionID string `json:"optionId"`
		Name     string `json:"name"`
		Kind     string `json:"kind"`
	}
	permissionResult struct {
		Outcome struct {
			Outcome  string `json:"outcome"`
			OptionID string `json:"optionId"`
		} `json:"outcome"`
	}
	createTerminalParams struct {
		SessionID       string   `json:"sessionId"`
		Command         string   `json:"command"`
		Args            []string `json:"args"`
		Cwd             string   `json:"cwd,omitempty"`
		OutputByteLimit int      `json:"outputByteLimit,omitempty"`
	}
	createTerminalResult struct {
		TerminalID string `json:"terminalId"`
	}
	terminalParams struct {
		SessionID  string `json:"sessionId"`
		TerminalID string `json:"terminalId"`
	}
	terminalExit struct {
		ExitCode *int    `json:"exitCode"`
		Signal   *string `json:"signal"`
	}
	terminalOutputResult struct {
		Output     string        `json:"output"`
		Truncated  bool          `json:"truncated"`
		ExitStatus *terminalExit `json:"exitStatus"`
	}
)

func (w *Workspace) ReadTextFile(ctx context.Context, path string) (string, error) {
	if !w.caps.readTextFile {
		return w.local.ReadTextFile(ctx, path)
	}
	if err := w.inside("read", path); err != nil {
		return "", err
	}
	var res readTextFileResult
	if err := w.call(ctx, "fs/read_text_file", readTextFileParams{w.sessionID, path}, &res); err != nil {
		return "", err
	}
	return res.Content, nil
}

func (w *Workspace) OpenFile(ctx context.Context, path string) (engine.File, error) {
	if !w.caps.readTextFile {
		return w.local.OpenFile(ctx, path)
	}
	// A file too large to send whole is read from disk, a window at a time;
	// an editor would not hold it in a buffer anyway.
	if fi, err := w.local.Disk().Stat(path); err == nil && (fi.IsDir() || fi.Size() > engine.EditorReadLimit) {
		return w.local.OpenFile(ctx, path)
	}
	text, err := w.ReadTextFile(ctx, path)
	if err != nil {
		return nil, err
	}
	return textFile{strings.NewReader(text)}, nil
}

// textFile is the editor's text of a file, read in windows.
type textFile struct{ *strings.Reader }

func (textFile) Close() error { return nil }

func (w *Workspace) WriteTextFile(ctx context.Context, path, content string) error {
	if !w.caps.writeTextFile {
		return w.local.WriteTextFile(ctx, path, content)
	}
	// Editors differ on creating missing directories; make them first.
	if err := w.local.Disk().MkdirAll(filepath.Dir(path)); err != nil {
		return err
	}
	if err := w.inside("write", path); err != nil {
		return err
	}
	return w.call(ctx, "fs/write_text_file", writeTextFileParams{w.sessionID, path, content}, nil)
}

// inside refuses a path that now leads outside the workspace's roots, just
// before the editor is asked to use it: the tool checked it before asking
// the user, and a file swapped for a symlink meanwhile would lead the
// editor's write outside. (The editor resolves the path itself, so this
// narrows the window to the call; a write coda makes goes through os.Root.)
func (w *Workspace) inside(op, path string) error {
	_, inside, err := w.local.Disk().Inside(path)
	if err != nil {
		return err
	}
	if !inside {
		return &fs.PathError{Op: op, Path: path, Err: rootfs.ErrOutside}
	}
	return nil
}

// Permission option ids, as offered to the client.
const (
	optionAllowOnce   = "allow_once"
	optionAllowAlways = "allow_always"
	optionRejectOnce  = "reject_once"
)

func (w *Workspace) RequestPermission(ctx context.Context, req engine.PermissionRequest) (bool, error) {
	w.mu.Lock()
	always := req.Key != "" && w.always[req.Key]
	for _, k := range req.Covers {
		always = always && w.always[k]
	}
	w.mu.Unlock()
	if always || (w.AutoApprove != nil && w.AutoApprove(req)) {
		return true, nil
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	alwaysName := "Always allow"
	switch {
	case req.Always != "":
		alwaysName = req.Always
	case req.Key != "":
		alwaysName = fmt.Sprintf("Always allow %s in this session", req.Key)
	}
	var choice string
	if req.Reason != nil && w.caps.elicitForm {
		// The choices, and a field for the reason (ask.go).
		var err error
		if choice, err = w.elicitPermission(ctx, req, alwaysName); err != nil {
			return false, err
		}
	} else {
		var err error
		if choice, err = w.requestPermission(ctx, req, alwaysName); err != nil {
			return false, err
		}
	}
	switch choice {
	case optionAllowOnce:
		return true, nil
	case optionAllowAlways:
		if req.Key != "" {
			w.mu.Lock()
			w.always[req.Key] = true
			w.mu.Unlock()
		}
		return true, nil
	default:
		return false, nil
	}
}

// requestPermission asks through session/request_permission and returns
// the option picked; "" for none (cancelled).
func (w *Workspace) requestPermission(ctx context.Context, req engine.PermissionRequest, alwaysName string) (string, error) {
	p := permissionParams{
		SessionID: w.sessionID,
		ToolCall:  w.toolCall(&req.ToolCall),
		Options: []permissionOption{
			{optionAllowOnce, "Allow once", "allow_once"},
			{optionAllowAlways, alwaysName, "allow_always"},
			{optionRejectOnce, "Reject", "reject_once"},
		},
	}
	// No timeout: the user may think as long as the turn runs.
	var res permissionResult
	if err := w.conn.Call(ctx, "session/request_permission", p, &res); err != nil {
		return "", callError(ctx, "session/request_permission", err)
	}
	if res.Outcome.Outcome != "selected" {
		return "", nil // cancelled
	}
	return res.Outcome.OptionID, nil
}

func (w *Workspace) RunCommand(ctx context.Context, c engine.Command) (engine.CommandResult, error) {
	if c.Dir == "" {
		c.Dir = w.Cwd()
	}
	if !w.caps.terminal {
		return w.local.RunCommand(ctx, c)
	}
	limit := c.OutputLimit
	if limit <= 0 {
		limit = engine.DefaultOutputLimit
	}
	res := engine.CommandResult{ExitCode: -1}
	var created createTerminalResult
	// The editor runs on this machine: the same shell as a local command.
	name, args := proc.Shell(c.Line)
	err := w.call(ctx, "terminal/create", createTerminalParams{
		SessionID: w.sessionID, Command: name, Args: args, Cwd: c.Dir, OutputByteLimit: limit,
	}, &created)
	if err != nil {
		return res, err
	}
	term := terminalParams{w.sessionID, created.TerminalID}
	res.TerminalID = created.TerminalID
	if c.Started != nil {
		c.Started(created.TerminalID)
	}

	runCtx, cancel := ctx, context.CancelFunc(func() {})
	if c.Timeout > 0 {
		runCtx, cancel = context.WithTimeout(ctx, c.Timeout)
	}
	defer cancel()
	var exit terminalExit
	waitErr := w.conn.Call(runCtx, "terminal/wait_for_exit", term, &exit)

	// Tidy up even when the turn was cancelled: stop the command, collect
	// its output, and release the terminal (the tool call has embedded it).
	cleanup := w.timeout
	if ctx.Err() != nil {
		cleanup = min(cleanup, cancelledCleanupTimeout)
	}
	tidy := context.WithoutCancel(ctx)
	stopped := waitErr != nil && runCtx.Err() != nil
	if stopped {
		_ = w.callWithin(tidy, cleanup, "terminal/kill", term, nil)
	}
	var out terminalOutputResult
	outErr := w.callWithin(tidy, cleanup, "terminal/output", term, &out)
	_ = w.callWithin(tidy, cleanup, "terminal/release", term, nil)

	res.Output, res.Truncated = out.Output, out.Truncated
	if waitErr != nil && out.ExitStatus != nil {
		exit = *out.ExitStatus
	}
	if exit.ExitCode != nil {
		res.ExitCode = *exit.ExitCode
	}
	if exit.Signal != nil {
		res.Signal = *exit.Signal
	}
	switch {
	case ctx.Err() != nil:
		return res, ctx.Err()
	case stopped:
		res.TimedOut = true
		return res, nil
	case waitErr != nil:
		return res, callError(ctx, "terminal/wait_for_exit", waitErr)
	case outErr != nil:
		return res, outErr
	}
	return res, nil
}

// call makes a file or terminal call to the editor, which must answer
// within the editor timeout.
func (w *Workspace) call(ctx context.Context, method string, params, result any) error {
	return w.callWithin(ctx, w.timeout, method, params, result)
}

func (w *Workspace) callWithin(ctx context.Context, timeout time.Duration, method string, params, result any) error {
	callCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := w.conn.Call(callCtx, method, params, result)
	if err != nil && ctx.Err() == nil && callCtx.Err() != nil {
		return fmt.Errorf("the editor did not answer %s within %s", method, timeout)
	}
	return callError(ctx, method, err)
}

// callError says why a call to the editor failed. The turn's own end
// (cancelled, or past a tool's timeout) is returned as it is, so the engine
// sees a cancellation; a JSON-RPC error from the editor keeps its message.
func callError(ctx context.Context, method string, err error) error {
	var rpcErr *jsonrpc.ClientError
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, jsonrpc.ErrDisconnected):
		return fmt.Errorf("%s: the editor has disconnected (stdin closed), so it cannot answer", method)
	case errors.As(err, &rpcErr):
		return fmt.Errorf("the editor refused %s: %s", method, rpcErr.Message)
	}
	return fmt.Errorf("%s: %w", method, err)
}
