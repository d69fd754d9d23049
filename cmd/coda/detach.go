package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/store"
)

// Detached runs (DESIGN §21): `coda run --detach` starts coda again as a
// process of its own, in its own session and process group (no daemon),
// its stdin closed and its stdout and stderr in files of the run's record,
// and returns once that process has said in run.json that it runs the
// run: `coda ps` lists it from then on, `coda result RUN --wait` waits for
// it, `coda cancel RUN` stops it. The process is told which run it is by
// detachedEnv, and says it is ready by closing the pipe it is given as fd
// 3; a process that dies before it is ready closes it too, and its stderr
// says why.

// detachedEnv names the run a detached process runs; it is not passed on
// to the commands the run starts.
const detachedEnv = "CODA_DETACHED_RUN"

// The files of a detached run's record that its process's stdout and
// stderr go to.
const (
	detachedStdout = "stdout"
	detachedStderr = "stderr"
)

// detach starts the process that runs runID with argv (coda's arguments,
// without --detach), waits until it is ready, and prints the run's id.
func detach(st *store.Store, runID string, argv []string, stdout io.Writer) error {
	if st == nil {
		return usageError("--detach needs a state directory, where the run's record and output go")
	}
	dir := st.RunDir(runID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--detach: %w", err)
	}
	outPath, errPath := filepath.Join(dir, detachedStdout), filepath.Join(dir, detachedStderr)
	out, err := os.OpenFile(outPath, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("--detach: %w", err)
	}
	defer out.Close()
	errOut, err := os.OpenFile(errPath, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("--detach: %w", err)
	}
	defer errOut.Close()
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("--detach: %w", err)
	}
	readyR, readyW, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("--detach: %w", err)
	}
	defer readyR.Close()
	cmd := &exec.Cmd{
		Path: exe, Args: append([]string{"coda"}, argv...),
		Env:    append(os.Environ(), detachedEnv+"="+runID),
		Stdout: out, Stderr: errOut, // stdin: the null device
		ExtraFiles: []*os.File{readyW},
	}
	ownSession(cmd)
	err = cmd.Start()
	readyW.Close()
	if err != nil {
		return fmt.Errorf("--detach: starting the run's process: %w", err)
	}
	io.Copy(io.Discard, readyR) // until it is ready, or gone
	pid := cmd.Process.Pid
	cmd.Process.Release()
	rr, err := st.ReadRun(runID)
	if err != nil || rr.Process == nil || rr.Process.PID != pid {
		said, _ := os.ReadFile(errPath)
		said = bytes.TrimSpace(said)
		if len(said) == 0 {
			said = []byte("it said nothing")
		}
		return fmt.Errorf("run %s: its process ended before it started the run: %s", runID, lastLines(string(said), 5))
	}
	_, err = fmt.Fprintln(stdout, runID)
	return err
}

// lastLines is the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// A detached is this process when it runs a detached run.
type detached struct {
	runID  string
	signal *os.File // fd 3: closed once run.json names this process
}

// detachedChild is this process as a detached run's, or nil. It is asked
// once: the variable is taken out of the environment, so the commands the
// run starts do not think they run one.
func detachedChild() *detached {
	id := os.Getenv(detachedEnv)
	if id == "" || store.CheckRunID(id) != nil {
		return nil
	}
	os.Unsetenv(detachedEnv)
	ready := os.NewFile(3, "ready")
	if ready != nil {
		closeOnExec(ready) // not held open by what the run starts
	}
	return &detached{runID: id, signal: ready}
}

// ready writes run.json as running in this process, then tells the
// process that started it (detach) that it may return. A resumed run's
// record keeps what it said; a new one's says what the turn is.
func (d *detached) ready(st *store.Store, t *engine.Turn) {
	defer func() {
		if d.signal != nil {
			d.signal.Close()
		}
	}()
	p := store.Self()
	p.Detached = true
	rr, err := st.ReadRun(t.RunID)
	if err != nil {
		model := t.UserModel
		if model == "" {
			model = t.DefaultModel
		}
		rr = &store.RunRecord{RunID: t.RunID, Agent: t.Agent.Agent.Name, Prompt: t.Prompt, Model: model, Started: time.Now().UTC().Format(time.RFC3339Nano)}
	}
	rr.Status, rr.Ended, rr.Process = "running", "", &p
	if err := st.WriteRun(rr); err != nil {
		fmt.Fprintln(os.Stderr, "coda: writing run.json:", err)
	}
}

// withoutDetach is args without --detach (before any "--").
func withoutDetach(args []string) []string {
	var out []string
	for i, a := range args {
		if a == "--" {
			return append(out, args[i:]...)
		}
		name, _, _ := strings.Cut(a, "=")
		if name == "--detach" || name == "-detach" {
			continue
		}
		out = append(out, a)
	}
	return out
}
