package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// CheckRunID says why id cannot name a run, or nil. A run id is a name in
// the state directory, never a path: `coda result ../../x` must not read
// outside it.
func CheckRunID(id string) error {
	switch {
	case id == "":
		return errors.New("the run id is empty")
	case strings.ContainsAny(id, `/\`+"\x00") || id == "." || id == ".." || !filepath.IsLocal(id):
		return fmt.Errorf("%q is not a run id: a run id is a name, such as 20260102-150405-a1b2c3, not a path", id)
	}
	return nil
}

// ReadRun reads a run's run.json.
func (s *Store) ReadRun(runID string) (*RunRecord, error) {
	if err := CheckRunID(runID); err != nil {
		return nil, err
	}
	if s == nil {
		return nil, fmt.Errorf("no run %q: no state directory", runID)
	}
	rr, err := readRunFile(s.RunDir(runID), runID)
	if os.IsNotExist(err) {
		return nil, fmt.Errorf("no run %q in %s", runID, filepath.Join(s.dir, "runs"))
	}
	return rr, err
}

// ReadSubRun reads the run.json of a worker or child of a recorded run:
// path names it from the run down, such as "workers/w1" or
// "children/c1/workers/w2".
func (s *Store) ReadSubRun(runID, path string) (*RunRecord, error) {
	parts := strings.Split(path, "/")
	if len(parts)%2 != 0 {
		return nil, fmt.Errorf("%q does not name a worker or child", path)
	}
	for i := 0; i < len(parts); i += 2 {
		if parts[i] != "workers" && parts[i] != "children" {
			return nil, fmt.Errorf("%q does not name a worker or child", path)
		}
		if err := CheckRunID(parts[i+1]); err != nil {
			return nil, fmt.Errorf("%q is not a worker or child name", parts[i+1])
		}
	}
	if _, err := s.ReadRun(runID); err != nil {
		return nil, err
	}
	rr, err := readRunFile(filepath.Join(s.RunDir(runID), filepath.FromSlash(path)), runID+"/"+path)
	if os.IsNotExist(err) {
		return nil, fmt.Errorf("run %s has no %s", runID, path)
	}
	return rr, err
}

// readRunFile reads the run.json in dir; name names the run in messages.
func readRunFile(dir, name string) (*RunRecord, error) {
	b, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		return nil, err
	}
	var rr RunRecord
	if err := json.Unmarshal(b, &rr); err != nil {
		return nil, fmt.Errorf("run %s: run.json: %v", name, err)
	}
	return &rr, nil
}

// RunIDs lists the recorded runs, newest first (run ids sort by time);
// none, without an error, when nothing was ever recorded.
func (s *Store) RunIDs() ([]string, error) {
	if s == nil {
		return nil, nil
	}
	entries, err := os.ReadDir(filepath.Join(s.dir, "runs"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, e := range entries {
		if e.IsDir() && CheckRunID(e.Name()) == nil {
			ids = append(ids, e.Name())
		}
	}
	slices.Sort(ids)
	slices.Reverse(ids)
	return ids, nil
}

// OpenRun opens a run's record as an os.Root, for reading the files it
// kept (its artifacts: Answer.Artifacts' RunPath) and nothing outside it.
func (s *Store) OpenRun(runID string) (*os.Root, error) {
	if err := CheckRunID(runID); err != nil {
		return nil, err
	}
	if s == nil {
		return nil, fmt.Errorf("no run %q: no state directory", runID)
	}
	return os.OpenRoot(s.RunDir(runID))
}

// ReadCheckpoint decodes the checkpoint.json of a run (Run.Checkpoint)
// into x; an error wrapping fs.ErrNotExist when the run left none.
func (s *Store) ReadCheckpoint(runID string, x any) error {
	if err := CheckRunID(runID); err != nil {
		return err
	}
	if s == nil {
		return fmt.Errorf("no run %q: no state directory", runID)
	}
	b, err := os.ReadFile(filepath.Join(s.RunDir(runID), CheckpointFile))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, x); err != nil {
		return fmt.Errorf("run %s: %s: %v", runID, CheckpointFile, err)
	}
	return nil
}

// Visits counts the stage visits a run's record holds (stages/NNN-…),
// by the highest number: a resumed run numbers its visits after them.
func (s *Store) Visits(runID string) (int, error) {
	entries, err := os.ReadDir(filepath.Join(s.RunDir(runID), "stages"))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "-")
		if v, err := strconv.Atoi(num); ok && err == nil {
			n = max(n, v)
		}
	}
	return n, nil
}
