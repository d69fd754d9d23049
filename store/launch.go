package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// A Launch is how a `coda run` was started (launch.json in its record):
// what `coda resume` starts it again with (DESIGN §21).
type Launch struct {
	// Args are the command's flags and task as they were given, without
	// --detach.
	Args []string `json:"args"`
	// Dir is the directory it was started in: its relative paths are
	// relative to it.
	Dir string `json:"dir"`
	// StateDir is the state directory it recorded into, absolute: a run
	// is resumed only where it was recorded.
	StateDir string `json:"stateDir"`
	// Agent and Blueprint are its agent's name and its blueprint's hash:
	// a run is resumed only with the blueprint it began with.
	Agent     string `json:"agent"`
	Blueprint string `json:"blueprint"`
}

// LaunchFile is the file in a run's record that WriteLaunch writes.
const LaunchFile = "launch.json"

// WriteLaunch writes the run's launch.json, whole, now.
func (s *Store) WriteLaunch(runID string, l *Launch) error {
	return s.writeRecordFile(runID, LaunchFile, l)
}

// ReadLaunch reads the run's launch.json; an error wrapping
// fs.ErrNotExist when the run has none (a turn served to an editor).
func (s *Store) ReadLaunch(runID string) (*Launch, error) {
	if err := CheckRunID(runID); err != nil {
		return nil, err
	}
	if s == nil {
		return nil, fmt.Errorf("no run %q: no state directory", runID)
	}
	b, err := os.ReadFile(filepath.Join(s.RunDir(runID), LaunchFile))
	if err != nil {
		return nil, err
	}
	var l Launch
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, fmt.Errorf("run %s: %s: %v", runID, LaunchFile, err)
	}
	return &l, nil
}

// WriteRun writes run.json whole, now, as rr says: what a process that
// starts a run of its own (`coda run --detach`'s) says of it before its
// engine does.
func (s *Store) WriteRun(rr *RunRecord) error {
	rr.Flags, rr.Warnings, rr.Files = nonNil(rr.Flags), nonNil(rr.Warnings), nonNil(rr.Files)
	return s.writeRecordFile(rr.RunID, "run.json", rr)
}

func (s *Store) writeRecordFile(runID, name string, x any) error {
	if err := CheckRunID(runID); err != nil {
		return err
	}
	if s == nil {
		return fmt.Errorf("no state directory")
	}
	b, err := MarshalRecord(x)
	if err != nil {
		return err
	}
	return s.writeWhole(filepath.Join(s.RunDir(runID), name), false, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}

// LockRun takes the run's lock (run.lock in its record), which the process
// that runs a `coda run` holds while it runs it: another process cannot
// take it (two `coda resume` of one run at once), and the system drops it
// when the process dies. held says another process holds it; release
// gives it back.
func (s *Store) LockRun(runID string) (release func(), held bool, err error) {
	if err := CheckRunID(runID); err != nil {
		return nil, false, err
	}
	if s == nil {
		return func() {}, false, nil
	}
	dir := s.RunDir(runID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, false, err
	}
	f, err := os.OpenFile(filepath.Join(dir, "run.lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, false, err
	}
	ok, err := tryLockFile(f)
	if err != nil || !ok {
		f.Close()
		return nil, !ok && err == nil, err
	}
	return func() { unlockFile(f); f.Close() }, false, nil
}

// ClaimRun makes the record directory of a new run, with an id newID
// makes that no other run has: two processes that start runs in the same
// second never share one record. It tries a few ids before it gives up.
func (s *Store) ClaimRun(newID func() string) (string, error) {
	if s == nil {
		return newID(), nil
	}
	runs := filepath.Join(s.dir, "runs")
	if err := os.MkdirAll(runs, 0o755); err != nil {
		return "", err
	}
	for range 8 {
		id := newID()
		if err := CheckRunID(id); err != nil {
			return "", err
		}
		err := os.Mkdir(filepath.Join(runs, id), 0o755)
		if err == nil {
			return id, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", err
		}
	}
	return "", fmt.Errorf("no new run id in %s: every one made was taken", runs)
}
