package engine

import (
	"context"
	"io"
	"time"
)

// A Workspace is what tools need from the place a turn runs in: the editor
// over ACP, or the local disk for `coda run`. The engine never knows which.
//
// Paths given to a Workspace are absolute and already checked against Roots
// by the caller (engine/tools tells the model why one is refused); what a
// Workspace reads or writes on the local disk it reaches through a Disk of
// its Roots, so that the check holds at the moment of use.
type Workspace interface {
	// Cwd is the session's working directory (absolute).
	Cwd() string
	// Roots are the directories tools may touch: Cwd and any additional ones.
	Roots() []string
	// ReadTextFile returns a file's text; over ACP the editor's unsaved
	// buffer wins.
	ReadTextFile(ctx context.Context, path string) (string, error)
	// OpenFile opens a file for reading windows of it. Over ACP the editor's
	// text is used when the editor offers it and the file is small enough to
	// send whole (EditorReadLimit); otherwise the file is read from disk, a
	// window at a time, so a huge file is never loaded whole.
	OpenFile(ctx context.Context, path string) (File, error)
	// WriteTextFile writes a file (through the editor when it offers to),
	// creating missing parent directories on disk.
	WriteTextFile(ctx context.Context, path, content string) error
	// RequestPermission asks the user whether a tool call may go ahead: a
	// refusal is (false, nil); an error means the user could not be asked. A
	// workspace remembers "allow always" per Key for its session. A cancelled
	// request is not allowed.
	RequestPermission(ctx context.Context, req PermissionRequest) (bool, error)
	// RunCommand runs a shell command line: in an editor terminal when the
	// editor offers terminals, else as a local process in its own process
	// group that never inherits coda's stdin or stdout. The command is killed
	// when ctx ends or its Timeout passes; the result then says so and the
	// error is nil unless ctx itself ended (ctx.Err()).
	RunCommand(ctx context.Context, cmd Command) (CommandResult, error)
}

// EditorReadLimit is the largest file read whole through the editor; larger
// files are read from disk.
const EditorReadLimit = 8 << 20

// A File is an open file whose windows can be read.
type File interface {
	io.ReaderAt
	io.Closer
	Size() int64
}

// A PermissionRequest describes the tool call awaiting the user's approval.
type PermissionRequest struct {
	ToolCall ToolCallEvent
	// Key groups calls for "always allow" (the tool name).
	Key string
	// Always names what "always allow" covers, for the option the user
	// picks; "" says "Always allow KEY in this session".
	Always string
	// Covers are the keys of other questions this one answers too (the
	// taint gate's question about a shell call answers the shell's own): it
	// goes without asking only when they are allowed always as well.
	// "Always allow" remembers Key alone.
	Covers []string
	// Reason, when not nil, asks for the user's reason too (the taint
	// gate's question, DESIGN §22): a workspace that can take one (an
	// editor that takes elicitation) puts what the user wrote here.
	Reason *string
}

// A Command is a shell command line to run.
type Command struct {
	Line string // run with `/bin/sh -c` (`cmd.exe /C` on Windows; proc_*.go)
	// Dir is the absolute working directory; "" means the workspace's Cwd.
	Dir     string
	Timeout time.Duration // 0: until ctx ends
	// OutputLimit caps the output kept, in bytes; 0 means
	// DefaultOutputLimit.
	OutputLimit int
	// Started, when not nil, is called with the editor terminal's id as soon
	// as the terminal exists, so the tool call can embed it while it runs.
	Started func(terminalID string)
}

// DefaultOutputLimit is the output a Command keeps unless it says otherwise.
const DefaultOutputLimit = 32 << 10

// A CommandResult is how a command ended and what it printed (stdout and
// stderr interleaved).
type CommandResult struct {
	Output string
	// Truncated says output was left out: CutBytes in the middle of Output
	// (local processes keep the head and the tail), or, when CutBytes is 0,
	// an unknown amount from the beginning (editor terminals keep the tail).
	Truncated bool
	CutBytes  int64
	ExitCode  int    // -1 when killed by a signal or unknown
	Signal    string // the signal that ended it, if any
	TimedOut  bool   // killed because Timeout passed
	// TerminalID is the editor terminal the command ran in, if any.
	TerminalID string
}
