package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/coda-acp/coda/internal/proc"
	"github.com/coda-acp/coda/internal/rootfs"
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

// LocalWorkspace works on the local disk, through a Disk of its roots.
// Approve answers permission requests; nil denies every request.
type LocalWorkspace struct {
	Dir     string
	Extra   []string
	Approve func(ctx context.Context, req PermissionRequest) (bool, error)
}

func (w *LocalWorkspace) Cwd() string     { return w.Dir }
func (w *LocalWorkspace) Roots() []string { return append([]string{w.Dir}, w.Extra...) }

// Disk is the local disk under the workspace's roots.
func (w *LocalWorkspace) Disk() rootfs.Disk { return rootfs.Disk{Roots: w.Roots()} }

func (w *LocalWorkspace) ReadTextFile(_ context.Context, path string) (string, error) {
	b, err := w.Disk().ReadFile(path)
	return string(b), err
}

func (w *LocalWorkspace) OpenFile(_ context.Context, path string) (File, error) {
	f, err := w.Disk().Open(path)
	if err != nil {
		return nil, err
	}
	return diskFile(f)
}

func (w *LocalWorkspace) WriteTextFile(_ context.Context, path, content string) error {
	return w.Disk().WriteFile(path, []byte(content), 0o644)
}

func (w *LocalWorkspace) RequestPermission(ctx context.Context, req PermissionRequest) (bool, error) {
	if w.Approve == nil {
		return false, nil
	}
	return w.Approve(ctx, req)
}

func (w *LocalWorkspace) RunCommand(ctx context.Context, c Command) (CommandResult, error) {
	if c.Dir == "" {
		c.Dir = w.Dir
	}
	return runLocal(ctx, c)
}

// diskFile is an open file on disk, for windowed reads; a directory is
// closed and refused.
func diskFile(f *os.File) (File, error) {
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if fi.IsDir() {
		f.Close()
		return nil, fmt.Errorf("%s is a directory", f.Name())
	}
	return &sizedFile{File: f, size: fi.Size()}, nil
}

type sizedFile struct {
	*os.File
	size int64
}

func (f *sizedFile) Size() int64 { return f.size }

// runLocal runs c as a local process: in the platform's shell (proc_*.go)
// and its own process group, stdin from /dev/null, stdout and stderr
// captured together and capped.
// The whole group is killed when ctx ends, when c.Timeout passes, and after
// the command exits (so nothing it started in the background lingers).
func runLocal(ctx context.Context, c Command) (CommandResult, error) {
	runCtx, cancel := ctx, context.CancelFunc(func() {})
	if c.Timeout > 0 {
		runCtx, cancel = context.WithTimeout(ctx, c.Timeout)
	}
	defer cancel()

	limit := c.OutputLimit
	if limit <= 0 {
		limit = DefaultOutputLimit
	}
	// Output goes through a pipe of our own, not one exec copies from, so
	// that Wait returns when the shell exits even if something it started in
	// the background still holds the pipe; the group is then killed.
	pr, pw, err := os.Pipe()
	if err != nil {
		return CommandResult{ExitCode: -1}, err
	}
	out := newCappedBuffer(limit)
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(out, pr)
	}()
	name, args := proc.Shell(c.Line)
	cmd := exec.CommandContext(runCtx, name, args...)
	cmd.Dir = c.Dir
	cmd.Stdin = nil // /dev/null
	cmd.Stdout = pw // one pipe for both: the streams interleave as printed
	cmd.Stderr = pw
	proc.OwnGroup(cmd)
	cmd.Cancel = func() error { return proc.KillGroup(cmd) }

	err = cmd.Start()
	pw.Close()
	if err != nil {
		pr.Close()
		<-copied
		return CommandResult{ExitCode: -1}, fmt.Errorf("start %q: %w", c.Line, err)
	}
	waitErr := cmd.Wait()
	_ = proc.KillGroup(cmd)
	select {
	case <-copied:
	case <-time.After(2 * time.Second):
		// A process that left the group still holds the pipe.
	}
	pr.Close()
	<-copied

	res := CommandResult{ExitCode: -1}
	res.Output, res.CutBytes = out.result()
	res.Truncated = res.CutBytes > 0
	if st := cmd.ProcessState; st != nil {
		res.ExitCode = st.ExitCode()
		if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.Signal = ws.Signal().String()
		}
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	if runCtx.Err() != nil {
		res.TimedOut = true
		return res, nil
	}
	var exitErr *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exitErr) {
		return res, waitErr
	}
	return res, nil
}

// cappedBuffer keeps the first and the last limit/2 bytes written to it and
// counts what fell between.
type cappedBuffer struct {
	headCap, tailCap int
	head             []byte
	tail             []byte // a ring once full
	tailPos          int
	total            int64
}

func newCappedBuffer(limit int) *cappedBuffer {
	return &cappedBuffer{headCap: limit - limit/2, tailCap: limit / 2}
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	n := len(p)
	b.total += int64(n)
	if room := b.headCap - len(b.head); room > 0 {
		k := min(room, len(p))
		b.head = append(b.head, p[:k]...)
		p = p[k:]
	}
	if b.tailCap == 0 {
		return n, nil
	}
	if len(p) >= b.tailCap {
		b.tail = append(b.tail[:0], p[len(p)-b.tailCap:]...)
		b.tailPos = 0
		return n, nil
	}
	for len(p) > 0 {
		if len(b.tail) < b.tailCap {
			k := min(b.tailCap-len(b.tail), len(p))
			b.tail = append(b.tail, p[:k]...)
			p = p[k:]
			continue
		}
		k := copy(b.tail[b.tailPos:], p)
		b.tailPos = (b.tailPos + k) % b.tailCap
		p = p[k:]
	}
	return n, nil
}

// result joins head and tail, marking the cut at UTF-8 boundaries, and says
// how many bytes were left out.
func (b *cappedBuffer) result() (string, int64) {
	tail := append(append([]byte(nil), b.tail[b.tailPos:]...), b.tail[:b.tailPos]...)
	kept := int64(len(b.head) + len(tail))
	if kept >= b.total {
		return string(b.head) + string(tail), 0
	}
	head := b.head
	for i := 0; i < utf8.UTFMax && len(head) > 0 && !utf8.Valid(head); i++ {
		head = head[:len(head)-1]
	}
	for i := 0; i < utf8.UTFMax && len(tail) > 0 && !utf8.RuneStart(tail[0]); i++ {
		tail = tail[1:]
	}
	cut := b.total - int64(len(head)) - int64(len(tail))
	return fmt.Sprintf("%s\n[... %d bytes of output cut ...]\n%s", head, cut, tail), cut
}
