// Package local is the Workspace of the local disk and local processes
// (engine.Workspace): `coda run`'s, and what acp's editor workspace falls
// back to where the editor does not offer files or terminals. Every file
// is reached through internal/rootfs, under the workspace's roots; every
// command runs in a process group of its own (internal/proc).
package local

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

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/internal/proc"
	"github.com/coda-acp/coda/internal/rootfs"
)

// A Workspace works on the local disk, through a Disk of its roots, and
// runs commands as local processes. Approve answers permission requests;
// nil denies every request.
type Workspace struct {
	Dir     string
	Extra   []string
	Approve func(ctx context.Context, req engine.PermissionRequest) (bool, error)
}

func (w *Workspace) Cwd() string     { return w.Dir }
func (w *Workspace) Roots() []string { return append([]string{w.Dir}, w.Extra...) }

// Disk is the local disk under the workspace's roots.
func (w *Workspace) Disk() rootfs.Disk { return rootfs.Disk{Roots: w.Roots()} }

func (w *Workspace) ReadTextFile(_ context.Context, path string) (string, error) {
	b, err := w.Disk().ReadFile(path)
	return string(b), err
}

func (w *Workspace) OpenFile(_ context.Context, path string) (engine.File, error) {
	f, err := w.Disk().OpenSized(path)
	if err != nil {
		return nil, err
	}
	return f, nil
}

func (w *Workspace) WriteTextFile(_ context.Context, path, content string) error {
	return w.Disk().WriteFile(path, []byte(content), 0o644)
}

func (w *Workspace) RequestPermission(ctx context.Context, req engine.PermissionRequest) (bool, error) {
	if w.Approve == nil {
		return false, nil
	}
	return w.Approve(ctx, req)
}

func (w *Workspace) RunCommand(ctx context.Context, c engine.Command) (engine.CommandResult, error) {
	if c.Dir == "" {
		c.Dir = w.Dir
	}
	return runLocal(ctx, c)
}

// runLocal runs c as a local process: in the platform's shell (proc_*.go)
// and its own process group, stdin from /dev/null, stdout and stderr
// captured together and capped.
// The whole group is killed when ctx ends, when c.Timeout passes, and after
// the command exits (so nothing it started in the background lingers).
func runLocal(ctx context.Context, c engine.Command) (engine.CommandResult, error) {
	runCtx, cancel := ctx, context.CancelFunc(func() {})
	if c.Timeout > 0 {
		runCtx, cancel = context.WithTimeout(ctx, c.Timeout)
	}
	defer cancel()

	limit := c.OutputLimit
	if limit <= 0 {
		limit = engine.DefaultOutputLimit
	}
	// Output goes through a pipe of our own, not one exec copies from, so
	// that Wait returns when the shell exits even if something it started in
	// the background still holds the pipe; the group is then killed.
	pr, pw, err := os.Pipe()
	if err != nil {
		return engine.CommandResult{ExitCode: -1}, err
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
		return engine.CommandResult{ExitCode: -1}, fmt.Errorf("start %q: %w", c.Line, err)
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

	res := engine.CommandResult{ExitCode: -1}
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
