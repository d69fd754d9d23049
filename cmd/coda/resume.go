package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/store"
)

// resumed is a run being taken up again (DESIGN §21): its id, what it
// left, what its launch must still be, and the arguments of a detached
// process that would go on with it.
type resumed struct {
	id    string
	from  *engine.Resume
	check func(*launch) error
	argv  []string
}

// resume is `coda resume RUN [--detach]`: a `coda run` that died or was
// cancelled goes on from its last finished stage, with the launch it was
// started with (launch.json), in the directory it was started in. The
// stages it finished are not run again: their records and answers feed
// the next stage's preamble as they did (engine/resume.go).
func resume(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var stateDir string
	var detachIt bool
	flags := newFlagSet("resume")
	flags.StringVar(&stateDir, "state-dir", "", "where run records are (default $XDG_STATE_HOME/coda)")
	flags.BoolVar(&detachIt, "detach", false, "go on in a process of its own: print the run id and return at once")
	rest, err := parseArgs(flags, args)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return usageError("resume takes one RUN-ID: coda resume RUN-ID [--detach]")
	}
	id := rest[0]
	if err := store.CheckRunID(id); err != nil {
		return usageError("%v", err)
	}
	if stateDir == "" {
		stateDir = defaultStateDir()
	}
	if stateDir, err = filepath.Abs(stateDir); err != nil {
		return err
	}
	st := store.New(stateDir)
	rr, err := st.ReadRun(id)
	if err != nil {
		return err
	}
	if err := resumable(rr); err != nil {
		return err
	}
	l, err := st.ReadLaunch(id)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("run %s cannot be resumed: it was not started by `coda run` (a turn served to an editor goes on in its session)", id)
	}
	if err != nil {
		return err
	}
	if !sameDir(l.StateDir, stateDir) {
		return fmt.Errorf("run %s cannot be resumed here: it was recorded in %s, not %s", id, l.StateDir, stateDir)
	}
	f, task, err := parseRun(l.Args)
	if err != nil {
		return fmt.Errorf("run %s: its launch.json: %v", id, err)
	}
	// Its relative paths (an agent's, a script model's, --output-schema
	// @FILE) are where it was started.
	if err := os.Chdir(l.Dir); err != nil {
		return fmt.Errorf("run %s cannot be resumed: the directory it was started in: %w", id, err)
	}
	f.stateDir, f.detach = stateDir, detachIt
	cp, err := engine.ReadCheckpoint(st, id)
	if err != nil {
		return err
	}
	visits, err := st.Visits(id)
	if err != nil {
		return err
	}
	rs := &resumed{
		id: id, from: &engine.Resume{Checkpoint: cp, Record: rr, Visits: visits},
		argv: []string{"resume", id, "--state-dir", stateDir},
		check: func(la *launch) error {
			if name := la.Agent.Agent.Name; name != rr.Agent {
				return fmt.Errorf("run %s cannot be resumed: it is agent %s's, and its blueprint now loads agent %s", id, rr.Agent, name)
			}
			hash := engine.BlueprintHash(la.Agent)
			if hash != l.Blueprint || (cp != nil && hash != cp.Blueprint) {
				return fmt.Errorf("run %s cannot be resumed: its blueprint (%s) changed since it ran; a run goes on only with the blueprint it began with", id, la.Agent.Source)
			}
			return nil
		},
	}
	if !detachIt {
		fmt.Fprintln(stderr, "coda: "+resumeLine(rr, cp))
	}
	return runTask(ctx, f, task, l.Args, rs, nil, stdout, stderr)
}

// resumable says why rr's run cannot be resumed, or nil.
func resumable(rr *store.RunRecord) error {
	id := rr.RunID
	switch {
	case rr.FinalOutput != nil:
		return &exitError{code: 1, msg: fmt.Sprintf("run %s already answered (stage %s): there is nothing to resume; `coda result %s` prints its answer", id, rr.FinalOutput.Stage, id)}
	case rr.Status == "running" && rr.Process != nil && rr.Process.Alive():
		return &exitError{code: 1, msg: fmt.Sprintf("run %s is still running (process %d): `coda result %s --wait` waits for it, `coda cancel %s` stops it", id, rr.Process.PID, id, id)}
	case rr.Status == "running", rr.Status == engine.StatusFailed, rr.Status == engine.StatusCancelled:
		return nil
	}
	return &exitError{code: 1, msg: fmt.Sprintf("run %s ended (%s): there is nothing to resume", id, rr.Status)}
}

// resumeLine says where a resumed run goes on from.
func resumeLine(rr *store.RunRecord, cp *engine.Checkpoint) string {
	if cp == nil {
		return fmt.Sprintf("resuming run %s from its start: no stage of it finished", rr.RunID)
	}
	var done []string
	for _, v := range cp.Done {
		done = append(done, v.Stage)
	}
	return fmt.Sprintf("resuming run %s at stage %s (done: %s)", rr.RunID, cp.Next, strings.Join(done, ", "))
}

// sameDir reports whether a and b name one directory.
func sameDir(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	ia, errA := os.Stat(a)
	ib, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(ia, ib)
}
