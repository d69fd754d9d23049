package store

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
)

// The sessions' listing (DESIGN §18): STATE/index/sessions.jsonl, an
// append-only index of what session/list shows of each session, one line
// each time a session is made, saved or deleted, by whichever coda process
// did it. Each process reads it once whole, then only what was appended
// since, and keeps the sessions sorted newest first, overall and by
// working directory: a page of 50 costs a stat of the index and a binary
// search, at 10,000 sessions as at 100, and paging through every session
// reads the index once.
//
// The index is a cache of the sessions' files, never the truth: when a
// process first reads it, the sessions directory is read too, and a file
// the index does not know, or knows at another size (sessions put there by
// hand, of the release before, or appended by a coda that stopped before
// it wrote the index line), is read and indexed. When it holds over twice
// the lines it has sessions, it is written anew.

const (
	indexDir  = "index"
	indexFile = "sessions.jsonl"
)

// SessionInfo is a session as session/list shows it.
type SessionInfo struct {
	ID                    string
	Cwd                   string
	AdditionalDirectories []string
	Title                 string
	UpdatedAt             time.Time
	// Note says what of the session cannot be loaded (a turn a crash
	// cut short, lines that cannot be read); "" for a whole session.
	Note string

	size   int64 // its file's size when it was indexed
	legacy bool  // of the release before (ID.json)
}

// indexLine is a line of the index.
type indexLine struct {
	ID                    string    `json:"id"`
	Cwd                   string    `json:"cwd,omitempty"`
	AdditionalDirectories []string  `json:"additionalDirectories,omitempty"`
	Title                 string    `json:"title,omitempty"`
	UpdatedAt             time.Time `json:"updatedAt"`
	Note                  string    `json:"note,omitempty"`
	Size                  int64     `json:"size,omitempty"`
	Legacy                bool      `json:"legacy,omitempty"`
	Deleted               bool      `json:"deleted,omitempty"`
}

func (l *indexLine) info() *SessionInfo {
	return &SessionInfo{ID: l.ID, Cwd: l.Cwd, AdditionalDirectories: l.AdditionalDirectories, Title: l.Title,
		UpdatedAt: l.UpdatedAt, Note: l.Note, size: l.Size, legacy: l.Legacy}
}

func lineOf(in *SessionInfo) indexLine {
	return indexLine{ID: in.ID, Cwd: in.Cwd, AdditionalDirectories: in.AdditionalDirectories, Title: in.Title,
		UpdatedAt: in.UpdatedAt.UTC(), Note: in.Note, Size: in.size, Legacy: in.legacy}
}

// newestFirst orders sessions by their latest activity, newest first, then
// by id.
func newestFirst(a, b *SessionInfo) int {
	return cmp.Or(b.UpdatedAt.Compare(a.UpdatedAt), strings.Compare(a.ID, b.ID))
}

// A sessionIndex is a process's copy of the index.
type sessionIndex struct {
	s  *Store
	mu sync.Mutex
	// loaded once read; then off is how far the file was read, file its
	// identity (a rewrite is another file), lines its lines.
	loaded bool
	off    int64
	file   os.FileInfo
	lines  int
	byID   map[string]*SessionInfo
	all    []*SessionInfo            // newest first
	byCwd  map[string][]*SessionInfo // newest first
}

// index is the store's index, made on first use.
func (s *Store) index() *sessionIndex {
	s.indexOnce.Do(func() { s.sessionIndex = &sessionIndex{s: s} })
	return s.sessionIndex
}

func (x *sessionIndex) path() string { return filepath.Join(x.s.dir, indexDir, indexFile) }

// put notes a session's new state in the index file and, once the index is
// read, in this process's copy.
func (x *sessionIndex) put(in SessionInfo) {
	x.write([]indexLine{lineOf(&in)})
}

// remove notes a session deleted.
func (x *sessionIndex) remove(id string) {
	x.write([]indexLine{{ID: id, Deleted: true, UpdatedAt: time.Now().UTC()}})
}

// write appends lines to the index file, under its lock, and takes them
// in. A failure is no session's: the index is read again from the
// sessions' files when it cannot be trusted.
func (x *sessionIndex) write(lines []indexLine) {
	var b []byte
	for i := range lines {
		enc, err := json.Marshal(&lines[i])
		if err != nil {
			return
		}
		b = append(append(b, enc...), '\n')
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	size, fi, err := x.append(b)
	if x.loaded {
		if err == nil && size == x.off && (x.file == nil || os.SameFile(fi, x.file)) {
			x.file = fi
			x.off += int64(len(b)) // this process's own lines, not read again
			x.lines += len(lines)
		}
		for i := range lines {
			x.take(&lines[i])
		}
	}
}

// append appends b to the index file, locked, and says where it went and
// which file it is.
func (x *sessionIndex) append(b []byte) (int64, os.FileInfo, error) {
	f, err := x.openLocked()
	if err != nil {
		return 0, nil, err
	}
	defer f.Close()
	defer unlockFile(f)
	before := x.s.hookAt(x.path())
	size, err := repairTail(f, 1<<20, before)
	if err != nil {
		return 0, nil, err
	}
	if before != nil {
		before()
	}
	if _, err = f.Write(b); err != nil {
		return 0, nil, err
	}
	fi, err := f.Stat()
	return size, fi, err
}

// openLocked opens the index file to append, made if need be, and locks
// it: the file at its path once locked, not one a rewrite replaced
// meanwhile, whose lines would be lost.
func (x *sessionIndex) openLocked() (*os.File, error) {
	for range 10 {
		f, err := os.OpenFile(x.path(), os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
		if errors.Is(err, fs.ErrNotExist) {
			if err = os.MkdirAll(filepath.Dir(x.path()), 0o700); err == nil {
				f, err = os.OpenFile(x.path(), os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
			}
		}
		if err != nil {
			return nil, err
		}
		if err := lockFile(f); err != nil {
			f.Close()
			return nil, err
		}
		held, err1 := f.Stat()
		now, err2 := os.Stat(x.path())
		if err1 == nil && err2 == nil && os.SameFile(held, now) {
			return f, nil
		}
		unlockFile(f)
		f.Close()
	}
	return nil, errors.New("the sessions' index keeps being replaced")
}

// take takes one line in: a session's state, or its deletion.
func (x *sessionIndex) take(l *indexLine) {
	if old := x.byID[l.ID]; old != nil {
		x.all = without(x.all, old)
		x.byCwd[old.Cwd] = without(x.byCwd[old.Cwd], old)
		if len(x.byCwd[old.Cwd]) == 0 {
			delete(x.byCwd, old.Cwd)
		}
		delete(x.byID, l.ID)
	}
	if l.Deleted {
		return
	}
	in := l.info()
	x.byID[in.ID] = in
	x.all = inserted(x.all, in)
	x.byCwd[in.Cwd] = inserted(x.byCwd[in.Cwd], in)
}

func without(list []*SessionInfo, in *SessionInfo) []*SessionInfo {
	i, found := slices.BinarySearchFunc(list, in, newestFirst)
	if found && list[i] == in {
		return slices.Delete(list, i, i+1)
	}
	return slices.DeleteFunc(list, func(o *SessionInfo) bool { return o == in })
}

func inserted(list []*SessionInfo, in *SessionInfo) []*SessionInfo {
	i, _ := slices.BinarySearchFunc(list, in, newestFirst)
	return slices.Insert(list, i, in)
}

// A ListPage is one page of the listing.
type ListPage struct {
	Sessions []SessionInfo
	// More: sessions follow the last one.
	More bool
	// Skipped names the files of the sessions directory that are not a
	// session's, and why, when they were first found.
	Skipped []string
}

// ListSessions lists the sessions newest first, limit of them, those in cwd
// alone when cwd is not "", after the session after (its UpdatedAt and ID;
// nil from the start).
func (s *Store) ListSessions(cwd string, after *SessionInfo, limit int) (*ListPage, error) {
	page := &ListPage{Sessions: []SessionInfo{}}
	if s == nil {
		return page, nil
	}
	x := s.index()
	x.mu.Lock()
	defer x.mu.Unlock()
	skipped, err := x.refresh()
	if err != nil {
		return nil, fmt.Errorf("listing sessions: %w", err)
	}
	page.Skipped = skipped
	list := x.all
	if cwd != "" {
		list = x.byCwd[cwd]
	}
	if after != nil {
		i, found := slices.BinarySearchFunc(list, after, newestFirst)
		if found {
			i++
		}
		list = list[i:]
	}
	if len(list) > limit {
		list, page.More = list[:limit], true
	}
	for _, in := range list {
		c := *in
		c.AdditionalDirectories = slices.Clone(in.AdditionalDirectories)
		page.Sessions = append(page.Sessions, c)
	}
	return page, nil
}

// refresh brings the process's copy up to the index file: what was
// appended since, or the whole file when it is another (rewritten), or,
// the first time, the file and the sessions directory.
func (x *sessionIndex) refresh() (skipped []string, err error) {
	fi, err := os.Stat(x.path())
	switch {
	case !x.loaded:
		return x.load()
	case errors.Is(err, fs.ErrNotExist):
		// Removed: the sessions directory is the truth.
		return x.load()
	case err != nil:
		return nil, err
	case !os.SameFile(fi, x.file) || fi.Size() < x.off:
		return x.load()
	case fi.Size() > x.off:
		if err := x.readFrom(x.off); err != nil {
			return x.load()
		}
	}
	return nil, nil
}

// readFrom reads the index file's lines from off on into the copy.
func (x *sessionIndex) readFrom(off int64) error {
	f, err := os.Open(x.path())
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return err
	}
	lr := newLineReader(f, off, 1<<20)
	for {
		b, err := lr.next()
		if errors.Is(err, errLong) {
			continue
		}
		if err != nil {
			break // the end, or a line being written
		}
		x.off = lr.off
		x.lines++
		var l indexLine
		if json.Unmarshal(b, &l) == nil && CheckSessionID(l.ID) == nil {
			x.take(&l)
		}
	}
	x.file = fi
	return nil
}

// load reads the index file whole, then the sessions directory: a file the
// index does not know, or knows at another size, is read and indexed; a
// session the index knows without a file is dropped.
func (x *sessionIndex) load() (skipped []string, err error) {
	x.loaded, x.off, x.lines, x.file = true, 0, 0, nil
	x.byID, x.all, x.byCwd = map[string]*SessionInfo{}, nil, map[string][]*SessionInfo{}
	if err := x.readFrom(0); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	dir := filepath.Join(x.s.dir, sessionsDir)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		entries, err = nil, nil
	}
	if err != nil {
		return nil, err
	}
	files := map[string]fs.DirEntry{} // id → its file, the append-only layout's first
	for _, e := range entries {
		name := e.Name()
		id, ok := strings.CutSuffix(name, jsonlExt)
		if !ok {
			if id, ok = strings.CutSuffix(name, legacyExt); !ok {
				continue
			}
		}
		if !e.Type().IsRegular() {
			if CheckSessionID(id) == nil {
				skipped = append(skipped, filepath.Join(dir, name)+": not a regular file")
			}
			continue
		}
		if CheckSessionID(id) != nil {
			continue
		}
		if prev, ok := files[id]; ok {
			// ID.json beside ID.jsonl: a conversion that stopped before it
			// removed the old file. The new one has it all.
			old := prev
			if strings.HasSuffix(name, legacyExt) {
				old = e
			} else {
				files[id] = e
			}
			os.Remove(filepath.Join(dir, old.Name()))
			continue
		}
		files[id] = e
	}
	var fresh []indexLine
	for id, e := range files {
		fi, err := e.Info()
		if err != nil {
			continue
		}
		legacy := strings.HasSuffix(e.Name(), legacyExt)
		if in := x.byID[id]; in != nil && in.size == fi.Size() && in.legacy == legacy {
			continue
		}
		r, err := x.s.readSession(id, 0, readAll)
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("%s: %v", filepath.Join(dir, e.Name()), err))
			if x.byID[id] != nil {
				fresh = append(fresh, indexLine{ID: id, Deleted: true})
			}
			continue
		}
		fresh = append(fresh, indexLine{ID: id, Cwd: r.state.Cwd, AdditionalDirectories: r.state.AdditionalDirectories,
			Title: r.state.Title, UpdatedAt: r.updated.UTC(), Note: noteOf(r.torn, r.damagedElse()), Size: r.size, Legacy: r.legacy})
	}
	for id := range x.byID {
		if files[id] == nil {
			fresh = append(fresh, indexLine{ID: id, Deleted: true})
		}
	}
	slices.SortFunc(fresh, func(a, b indexLine) int { return strings.Compare(a.ID, b.ID) })
	for i := range fresh {
		x.take(&fresh[i])
	}
	slices.Sort(skipped)
	if x.lines+len(fresh) > 2*len(x.byID)+64 {
		x.rewrite()
	} else if len(fresh) > 0 {
		var b []byte
		for i := range fresh {
			enc, _ := json.Marshal(&fresh[i])
			b = append(append(b, enc...), '\n')
		}
		if size, fi, err := x.append(b); err == nil && size == x.off && (x.file == nil || os.SameFile(fi, x.file)) {
			x.file, x.off = fi, x.off+int64(len(b))
			x.lines += len(fresh)
		}
	}
	return skipped, nil
}

// readAll decodes each exchange of a legacy file, to find where it cannot
// be read; an append-only file's lines are checked without it.
var readAll = func(*Exchange) {}

// rewrite writes the index anew: one line a session. The old file is
// locked meanwhile, so no process appends to it once it is replaced.
func (x *sessionIndex) rewrite() {
	var b []byte
	for _, in := range x.all {
		l := lineOf(in)
		enc, err := json.Marshal(&l)
		if err != nil {
			return
		}
		b = append(append(b, enc...), '\n')
	}
	old, err := x.openLocked()
	if err != nil {
		return
	}
	defer old.Close()
	defer unlockFile(old)
	if runtime.GOOS == "windows" {
		// Windows replaces no file that is open: a line another process
		// appends meanwhile may be lost, and found again at the next load.
		unlockFile(old)
		old.Close()
	}
	err = x.s.writeWhole(x.path(), false, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
	if err != nil {
		return
	}
	if fi, err := os.Stat(x.path()); err == nil && fi.Size() == int64(len(b)) {
		x.file, x.off, x.lines = fi, int64(len(b)), len(x.all)
	} else {
		x.loaded = false // another process appended already: read it all again
	}
}
