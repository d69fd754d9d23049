// Package store keeps coda's state directory (DESIGN §9, §18): the run
// records under runs/RUN-ID. The engine writes them and `coda result`
// reads them; the sessions, acp's today, join them under sessions/.
//
// It imports nothing of coda above it (engine, acp): the engine is its
// user, through the types and calls here.
package store

import "path/filepath"

// A Store is a state directory. A nil *Store keeps nothing: every record
// written to it is dropped, and it reads none.
type Store struct {
	dir string

	// BeforeWrite, when set (by tests, before any run), is called on a
	// record's writer goroutine before each file of it is written: a
	// test holds a write back, or fails it, with it.
	BeforeWrite func(path string)
}

// New returns the store at dir, or nil (keeping nothing) when dir is "".
// Nothing is made on disk until something is written.
func New(dir string) *Store {
	if dir == "" {
		return nil
	}
	return &Store{dir: dir}
}

// Dir is the state directory; "" for a nil Store.
func (s *Store) Dir() string {
	if s == nil {
		return ""
	}
	return s.dir
}

func (s *Store) hook() func(path string) {
	if s == nil {
		return nil
	}
	return s.BeforeWrite
}

// RunDir is where the record of the run id lives: runs/RUN-ID, with a
// worker's or child's nested in its parent's (runs/RUN/workers/w1); ""
// for a nil Store.
func (s *Store) RunDir(runID string) string {
	if s == nil {
		return ""
	}
	return filepath.Join(s.dir, "runs", runID)
}
