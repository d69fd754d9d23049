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

// A sessionIndex is a process's copy of the index. Building it (the first
// listing, or one after the file was replaced) reads every session file the
// index does not know, which takes seconds at 10,000 sessions: it is built
// apart (build) and put in place when done, so that the appends of other
// sessions, which note their lines in the copy, never wait for it.
type sessionIndex struct {
	s  *Store
	mu sync.Mutex // guards cur; never held while a listing is built
	// cur is the copy, nil until first built.
	cur *listing
	// building lets one build run at a time.
	building sync.Mutex

	// queue holds the lines of turns' appends (later) until a flush
	// writes them; flushing keeps them in the order queued.
	qmu      sync.Mutex
	queue    []indexLine
	flushing sync.Mutex
}

// A listing is a copy of the index: off is how far its file was read, file
// its identity (a rewrite is another file), lines its lines.
type listing struct {
	off   int64
	file  os.FileInfo
	lines int
	byID  map[string]*SessionInfo
	all   []*SessionInfo            // newest first
	byCwd map[string][]*SessionInfo // newest first
}

func newListing() *listing {
	return &listing{byID: map[string]*SessionInfo{}, byCwd: map[string][]*SessionInfo{}}
}

// index is the store's index, made on first use.
func (s *Store) index() *sessionIndex {
	s.indexOnce.Do(func() { s.sessionIndex = &sessionIndex{s: s} })
	return s.sessionIndex
}

func (x *sessionIndex) path() string { return filepath.Join(x.s.dir, indexDir, indexFile) }

// put notes a session's new state in the index file and, once the index is
// read, in this process's copy, after the lines queued before it.
func (x *sessionIndex) put(in SessionInfo) {
	x.flush()
	x.write([]indexLine{lineOf(&in)})
}

// remove notes a session deleted, after the lines queued before it.
func (x *sessionIndex) remove(id string) {
	x.flush()
	x.write([]indexLine{{ID: id, Deleted: true, UpdatedAt: time.Now().UTC()}})
}

// later is put off the caller's path: a turn's append is synced before its
// answer is sent, and the index's line, a listing's cache, need not be. The
// line is queued until a flush: Store.Flush, which acp calls once the
// turn's answer is out, a listing, a put or a remove in this process, all
// of which write the queue first. A process that dies before leaves the
// index a line short, which the next listing that reads the session's file
// makes up.
func (x *sessionIndex) later(in SessionInfo) {
	x.qmu.Lock()
	defer x.qmu.Unlock()
	x.queue = append(x.queue, lineOf(&in))
}

// Flush writes what the store put off the answer's path: the index's lines
// of the turns appended (sessionIndex.later). acp calls it once a turn's
// answer is out, and before the process exits.
func (s *Store) Flush() {
	if s != nil {
		s.index().flush()
	}
}

// flush writes the lines queued, in the order queued.
func (x *sessionIndex) flush() {
	x.flushing.Lock()
	defer x.flushing.Unlock()
	x.qmu.Lock()
	q := x.queue
	x.queue = nil
	x.qmu.Unlock()
	if len(q) > 0 {
		x.write(q)
	}
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
	if l := x.cur; l != nil {
		if err == nil && size == l.off && (l.file == nil || os.SameFile(fi, l.file)) {
			l.file = fi
			l.off += int64(len(b)) // this process's own lines, not read again
			l.lines += len(lines)
		}
		for i := range lines {
			l.take(&lines[i])
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
func (x *listing) take(l *indexLine) {
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
	x.flush() // this process's own turns listed as they are
	skipped, err := x.refresh()
	if err != nil {
		return nil, fmt.Errorf("listing sessions: %w", err)
	}
	page.Skipped = skipped
	x.mu.Lock()
	defer x.mu.Unlock()
	list := x.cur.all
	if cwd != "" {
		list = x.cur.byCwd[cwd]
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
// appended since; or, the first time, or when the file is another
// (rewritten) or gone, a copy built anew from the file and the sessions
// directory, without holding the copy meanwhile.
func (x *sessionIndex) refresh() (skipped []string, err error) {
	x.mu.Lock()
	current := x.catchUp()
	x.mu.Unlock()
	if current {
		return nil, nil
	}
	x.building.Lock()
	defer x.building.Unlock()
	x.mu.Lock()
	current = x.catchUp() // another listing built it meanwhile
	x.mu.Unlock()
	if current {
		return nil, nil
	}
	l, skipped, err := x.build()
	if err != nil {
		return nil, err
	}
	x.mu.Lock()
	x.cur = l
	x.catchUp() // what was appended while it was built
	x.mu.Unlock()
	return skipped, nil
}

// catchUp reads into the copy what was appended to the index file since,
// and says whether the copy is current; false when there is none, or the
// file is another or gone. Called with mu held.
func (x *sessionIndex) catchUp() bool {
	l := x.cur
	if l == nil {
		return false
	}
	fi, err := os.Stat(x.path())
	switch {
	case err != nil:
		// Gone: the sessions directory is the truth.
		return false
	case l.file == nil || !os.SameFile(fi, l.file) || fi.Size() < l.off:
		return false
	case fi.Size() > l.off:
		return l.readFrom(x.path(), l.off) == nil
	}
	return true
}

// readFrom reads the index file's lines from off on into the copy.
func (x *listing) readFrom(path string, off int64) error {
	f, err := os.Open(path)
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

// build reads the index file whole into a new copy, then the sessions
// directory: a file the index does not know, or knows at another size, is
// read and indexed; a session the index knows without a file is dropped.
func (x *sessionIndex) build() (l *listing, skipped []string, err error) {
	l = newListing()
	if err := l.readFrom(x.path(), 0); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, err
	}
	dir := filepath.Join(x.s.dir, sessionsDir)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		entries, err = nil, nil
	}
	if err != nil {
		return nil, nil, err
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
		if in := l.byID[id]; in != nil && in.size == fi.Size() && in.legacy == legacy {
			continue
		}
		r, err := x.s.readSession(id, 0, readAll)
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("%s: %v", filepath.Join(dir, e.Name()), err))
			if l.byID[id] != nil {
				fresh = append(fresh, indexLine{ID: id, Deleted: true, UpdatedAt: time.Now().UTC()})
			}
			continue
		}
		fresh = append(fresh, indexLine{ID: id, Cwd: r.state.Cwd, AdditionalDirectories: r.state.AdditionalDirectories,
			Title: r.state.Title, UpdatedAt: r.updated.UTC(), Note: noteOf(r.torn, r.damagedElse()), Size: r.size, Legacy: r.legacy})
	}
	for id := range l.byID {
		if files[id] == nil {
			fresh = append(fresh, indexLine{ID: id, Deleted: true, UpdatedAt: time.Now().UTC()})
		}
	}
	slices.SortFunc(fresh, func(a, b indexLine) int { return strings.Compare(a.ID, b.ID) })
	for i := range fresh {
		l.take(&fresh[i])
	}
	slices.Sort(skipped)
	if l.lines+len(fresh) > 2*len(l.byID)+64 {
		x.rewrite(l)
	} else if len(fresh) > 0 {
		x.appendFresh(l, fresh)
	}
	return l, skipped, nil
}

// appendFresh appends to the index file the lines a build made from the
// sessions' files, but first takes in the lines other processes appended
// since the build read the index: theirs are as new as the build's or newer
// (a session appended to after the build read its file), and win.
func (x *sessionIndex) appendFresh(l *listing, fresh []indexLine) {
	f, err := x.openLocked()
	if err != nil {
		return
	}
	defer f.Close()
	defer unlockFile(f)
	before := x.s.hookAt(x.path())
	if _, err := repairTail(f, 1<<20, before); err != nil {
		return
	}
	newer, current := l.catchUpLocked(f)
	var b []byte
	n := 0
	for i := range fresh {
		if newer[fresh[i].ID] {
			continue
		}
		enc, err := json.Marshal(&fresh[i])
		if err != nil {
			continue
		}
		b, n = append(append(b, enc...), '\n'), n+1
	}
	if len(b) == 0 {
		return
	}
	if before != nil {
		before()
	}
	if _, err := f.Write(b); err != nil || !current {
		return
	}
	if fi, err := f.Stat(); err == nil {
		l.file, l.off, l.lines = fi, l.off+int64(len(b)), l.lines+n
	}
}

// catchUpLocked takes into l the lines of the index file f, locked, that
// were appended since l read it, and returns their sessions' ids; current
// says l is now as far as f's end (f is the file l read).
func (l *listing) catchUpLocked(f *os.File) (ids map[string]bool, current bool) {
	fi, err := f.Stat()
	if err != nil || l.file != nil && !os.SameFile(fi, l.file) || fi.Size() < l.off {
		return nil, false
	}
	ids = map[string]bool{}
	lr := newLineReader(io.NewSectionReader(f, l.off, fi.Size()-l.off), l.off, 1<<20)
	for {
		b, err := lr.next()
		if errors.Is(err, errLong) {
			continue
		}
		if err != nil {
			break
		}
		l.off = lr.off
		l.lines++
		var line indexLine
		if json.Unmarshal(b, &line) == nil && CheckSessionID(line.ID) == nil {
			l.take(&line)
			ids[line.ID] = true
		}
	}
	l.file = fi
	return ids, l.off == fi.Size()
}

// readAll decodes each exchange of a legacy file, to find where it cannot
// be read; an append-only file's lines are checked without it.
var readAll = func(*Exchange) {}

// rewrite writes the index anew from the copy l: one line a session, with
// what other processes appended since l read it taken in first. The old
// file is locked meanwhile, so no process appends to it once it is
// replaced.
func (x *sessionIndex) rewrite(l *listing) {
	old, err := x.openLocked()
	if err != nil {
		return
	}
	defer old.Close()
	defer unlockFile(old)
	l.catchUpLocked(old)
	var b []byte
	for _, in := range l.all {
		line := lineOf(in)
		enc, err := json.Marshal(&line)
		if err != nil {
			return
		}
		b = append(append(b, enc...), '\n')
	}
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
		l.file, l.off, l.lines = fi, int64(len(b)), len(l.all)
	} else {
		l.file = nil // another process appended already: built again at the next listing
	}
}
