package mcp

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/coda-acp/coda/internal/proc"
	"github.com/coda-acp/coda/internal/textcut"
)

// process is a stdio server's process. It runs in a process group of its
// own, with pipes coda owns: waiting for it never waits on what it started,
// and stopping it kills the whole group, so nothing is left behind.
type process struct {
	cmd     *exec.Cmd
	release func()   // ends the guard of its group (proc.GuardGroup)
	stdin   *os.File // the write end: closing it asks the server to exit
	stdout  *os.File // the read end
	stderr  *tail

	exited  chan struct{} // closed once the process has exited and was reaped
	waitErr error         // set before exited closes
	logged  chan struct{} // closed once its stderr is read to the end
}

// inherited are the variables a server gets from coda's environment, as the
// MCP SDKs give them (and what reaching the network through a proxy
// takes): enough to find programs, a home and the internet, and none of
// coda's own keys. The editor's env entries come on top.
var inherited = func() []string {
	net := []string{"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
		"SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS"}
	if runtime.GOOS == "windows" {
		return append(net, "APPDATA", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PATH", "PATHEXT", "PROCESSOR_ARCHITECTURE",
			"PROGRAMFILES", "SYSTEMDRIVE", "SYSTEMROOT", "TEMP", "TMP", "USERNAME", "USERPROFILE")
	}
	return append(net, "HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "TMPDIR", "TZ")
}()

// environ is a server's environment: the inherited variables, then the
// editor's.
func environ(extra []string) []string {
	var env []string
	for _, k := range inherited {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return append(env, extra...)
}

func startProcess(s Server, log *slog.Logger) (*process, error) {
	cmd := exec.Command(s.Command, s.Args...)
	cmd.Dir = s.Dir
	cmd.Env = environ(s.Env)
	proc.OwnGroup(cmd)
	var files []*os.File // every pipe end, closed on failure
	pipe := func() (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		files = append(files, r, w)
		return r, w, err
	}
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	inR, inW, err1 := pipe()
	outR, outW, err2 := pipe()
	errR, errW, err3 := pipe()
	if err := errors.Join(err1, err2, err3); err != nil {
		closeAll()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	// A server that ignores its input's end would outlive a coda killed
	// outright (kill -9): on Linux it is killed with coda (StartBound),
	// and on every unix so is what it started in its group (GuardGroup).
	if err := proc.StartBound(cmd); err != nil {
		closeAll()
		return nil, err
	}
	release, err := proc.GuardGroup(cmd)
	if err != nil {
		_ = proc.KillGroup(cmd)
		_ = cmd.Wait()
		closeAll()
		return nil, fmt.Errorf("guarding its process group: %w", err)
	}
	// The child holds its own ends now.
	inR.Close()
	outW.Close()
	errW.Close()
	p := &process{cmd: cmd, release: release, stdin: inW, stdout: outR, stderr: &tail{}, exited: make(chan struct{}), logged: make(chan struct{})}
	go p.readStderr(errR, log.With("server", s.Name))
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// readStderr logs what the server writes to stderr, a line at a time, and
// keeps its last lines for an error message.
func (p *process) readStderr(r *os.File, log *slog.Logger) {
	defer close(p.logged)
	defer r.Close()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4<<10), 64<<10)
	for sc.Scan() {
		line := sc.Text()
		p.stderr.add(line)
		log.Debug("MCP server stderr", "line", line)
	}
	// A line too long for the buffer: drain the rest unlogged.
	_, _ = io.Copy(io.Discard, r)
}

func (p *process) hasExited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// exitError says how the process ended, with the last of its stderr; err
// is what to say while it has not.
func (p *process) exitError(err error) error {
	if p.hasExited() {
		// Its last words may still be in the pipe.
		select {
		case <-p.logged:
		case <-time.After(closeGrace):
		}
		switch st := p.cmd.ProcessState; {
		case st != nil && st.ExitCode() >= 0:
			err = fmt.Errorf("it exited with status %d", st.ExitCode())
		case st != nil:
			err = fmt.Errorf("it was ended (%s)", st)
		}
	}
	if last := p.stderr.last(); last != "" {
		err = fmt.Errorf("%w; its stderr ends: %s", err, last)
	}
	return err
}

// stop ends the process: its stdin closes, it has grace to exit, then its
// group is killed; whatever it left in its group is killed too. When stop
// returns the process has been reaped.
func (p *process) stop(grace time.Duration) {
	p.stdin.Close()
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-p.exited:
	case <-timer.C:
	}
	p.release()
	_ = proc.KillGroup(p.cmd)
	<-p.exited
	p.stdout.Close()
	select {
	case <-p.logged:
	case <-time.After(grace):
		// Something that left the group still holds stderr.
	}
}

// tail keeps the last lines of a stream.
type tail struct {
	mu    sync.Mutex
	lines []string
}

const tailLines, tailLineBytes = 3, 300

func (t *tail) add(line string) {
	line = strings.TrimSpace(line)
	if line == "" {
		return
	}
	if len(line) > tailLineBytes {
		line = textcut.At(line, tailLineBytes) + "…"
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, line)
	if len(t.lines) > tailLines {
		t.lines = t.lines[1:]
	}
}

func (t *tail) last() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(t.lines, " | ")
}
