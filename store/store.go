// Package store keeps coda's state directory (DESIGN §9, §14, §18): the
// run records under runs/RUN-ID, which the engine writes and `coda result`
// reads, and the sessions under sessions/ (one append-only file each,
// shared by every coda process on the directory) with their listing's
// index under index/, which acp reads and writes. Temporary files are made
// in tmp/ alone, so that Clean finds what a crash left.
//
// It imports nothing of coda above it (engine, acp): the engine is its
// user, through the types and calls here.
package store

import (
	"path/filepath"
	"sync"
	"sync/atomic"
)

// A Store is a state directory. A nil *Store keeps nothing: every record
// written to it is dropped, and it reads none.
type Store struct {
	dir string

	// BeforeWrite, when set (by tests, before any run), is called before
	// each write to the state directory: a file written whole (a record's,
	// on its writer's goroutine; a new session's; the index anew) once its
	// temporary file is made, an append (a session's, the index's) once its
	// file is locked, and the cut of a torn last line. A test holds a write
	// back, fails it, or kills the process there with it.
	BeforeWrite func(path string)
	// BeforeLockWait, when set (by tests), is called when an append finds
	// its session's file locked by another process (or another open file
	// of this one), before it waits for the lock.
	BeforeLockWait func(path string)
	// BeforeRead, when set (by tests), is called before a session's file
	// is opened to be read (a load, a replay, the listing's first read): a
	// test holds a load back with it.
	BeforeRead func(path string)

	// MaxSessionBytes is the largest session file loaded, and so the
	// largest an append lets one grow (ErrSessionFull); MaxLineBytes the
	// longest line read in one (0: DefaultMaxSessionBytes,
	// DefaultMaxLineBytes).
	MaxSessionBytes int64
	MaxLineBytes    int

	indexOnce    sync.Once
	sessionIndex *sessionIndex // the sessions' listing (index.go)

	// Detached says the runs this process records were started by `coda
	// run --detach`, in a process of their own (run.json's process).
	Detached bool

	// behind counts the turns' records still being written after their
	// runs ended (Run.Finish).
	behind atomic.Int64
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

// hookAt is the BeforeWrite hook called with path, or nil.
func (s *Store) hookAt(path string) func() {
	if h := s.hook(); h != nil {
		return func() { h(path) }
	}
	return nil
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
