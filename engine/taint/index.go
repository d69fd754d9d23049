package taint

import (
	"fmt"
	"os"
	"sync"
	"time"
)

// An Index is what the private files under a session's roots hold (the
// secrets Found looks for), found once a session rather than once a turn:
// a walk of a large workspace at every turn's first tool result cost a
// turn in a 20,000-file tree 1.65 times what it cost without (issue 32).
// A later turn checks that nothing changed by a stat of each folder the
// walk went through (a file added, removed or renamed changes its
// folder's time) and of each private file it read, and walks again only
// when something did. A walk that a bound stopped is kept, and said once
// (Untold), not taken again at every turn. Safe for concurrent use; a nil
// *Index leaves each turn to walk for itself.
type Index struct {
	mu    sync.Mutex
	files *rootFiles
	key   string    // privatePaths.key of files
	at    time.Time // when files was read
	told  bool      // Untold said the walk was partial
	// keep is the folder a walk's listing is kept in for later sessions
	// (OpenIndex, kept.go); "" keeps none.
	keep string
	// now is the clock (tests set it).
	now func() time.Time
}

// NewIndex returns an empty Index, for a session.
func NewIndex() *Index { return &Index{now: time.Now} }

// settle is how long after a walk a folder's time must be older than the
// walk for a change within the same tick of a coarse clock (a file system
// that keeps seconds, or two) to be seen: a folder changed as recently is
// walked again.
const settle = 2 * time.Second

// current is what the private files under paths' roots hold now: the
// Index's last reading if nothing changed since, else a new one.
func (ix *Index) current(paths *privatePaths) *rootFiles {
	if ix == nil {
		f := &rootFiles{}
		f.read(paths)
		return f
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.files != nil && ix.key == paths.key && ix.unchanged() {
		return ix.files
	}
	at := ix.now()
	if ix.files == nil && ix.keep != "" {
		if f := ix.load(paths); f != nil {
			ix.files, ix.key, ix.at = f, paths.key, at
			return f
		}
	}
	f := &rootFiles{}
	f.read(paths)
	ix.files, ix.key, ix.at = f, paths.key, at
	if ix.keep != "" {
		ix.save(paths, f, at)
	}
	return f
}

// unchanged reports whether the folders and private files of the last
// reading are as they were. ix.mu is held.
func (ix *Index) unchanged() bool {
	recent := ix.at.Add(-settle)
	for dir, mod := range ix.files.dirs {
		fi, err := os.Lstat(dir)
		if err != nil || !fi.ModTime().Equal(mod) || !mod.Before(recent) {
			return false
		}
	}
	for path, st := range ix.files.stamps {
		fi, err := os.Lstat(path)
		if err != nil || fi.Size() != st.size || !fi.ModTime().Equal(st.mod) || !st.mod.Before(recent) {
			return false
		}
	}
	return true
}

// Untold is, once a session, what to tell the user when the last walk
// stopped at a bound, so some private files are not known: "" otherwise.
func (ix *Index) Untold() string {
	if ix == nil {
		return ""
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.files == nil || !ix.files.partial || ix.told {
		return ""
	}
	ix.told = true
	return fmt.Sprintf("the workspace is too large to look through for private files whole (%d entries, %d private files looked at): secrets of a private file past them are not masked unless a tool reads that file", ix.files.entries, len(ix.files.paths))
}

// turnFiles is a turn's look at the private files under the roots: read
// once a turn, the first time it is asked for, from the session's Index
// (index; nil walks for the turn alone).
type turnFiles struct {
	index *Index
	once  sync.Once
	files *rootFiles
}

func (t *turnFiles) get(paths *privatePaths) *rootFiles {
	t.once.Do(func() { t.files = t.index.current(paths) })
	return t.files
}

// UseIndex has the gate look for private files through the session's
// Index, before it first looks. A nil Gate ignores it.
func (g *Gate) UseIndex(ix *Index) {
	if g != nil {
		g.files.index = ix
	}
}

// UseIndex is Gate.UseIndex for the matcher on its own.
func (s *Secrets) UseIndex(ix *Index) {
	if s != nil {
		s.files.index = ix
	}
}
