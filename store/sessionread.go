package store

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/coda-acp/coda/internal/bytesize"
)

// Reading a session's file: one line at a time, each at most the store's
// longest, so that a long session costs the memory of its longest line.

// errTorn is a file's last line without its newline: a crash mid-append,
// or an append still being written.
var errTorn = errors.New("a last line without its end")

// errLong is a line over the limit, skipped.
var errLong = errors.New("a line over the limit")

// A lineReader reads a file's lines.
type lineReader struct {
	r   *bufio.Reader
	off int64 // where the next line starts
	max int
	buf []byte
}

func newLineReader(r io.Reader, off int64, max int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10), off: off, max: max}
}

// next returns the next whole line, without its newline, valid until the
// next call: io.EOF at the end, errTorn for a last line without its
// newline, errLong for a line over the limit (skipped: the next call
// reads the line after it).
func (lr *lineReader) next() ([]byte, error) {
	lr.buf = lr.buf[:0]
	long := false
	for {
		chunk, err := lr.r.ReadSlice('\n')
		lr.off += int64(len(chunk))
		if !long {
			if len(lr.buf)+len(chunk) > lr.max+1 {
				long, lr.buf = true, lr.buf[:0]
			} else {
				lr.buf = append(lr.buf, chunk...)
			}
		}
		switch {
		case err == nil && long:
			return nil, errLong
		case err == nil:
			return lr.buf[:len(lr.buf)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(lr.buf) == 0 && !long:
			return nil, io.EOF
		case errors.Is(err, io.EOF):
			// Not a line: where the next whole line would start is
			// before it.
			lr.off -= int64(len(lr.buf))
			if long {
				return nil, errLong
			}
			return nil, errTorn
		default:
			return nil, err
		}
	}
}

func (s *Store) maxLine() int {
	if s.MaxLineBytes > 0 {
		return s.MaxLineBytes
	}
	return DefaultMaxLineBytes
}

func (s *Store) maxSession() int64 {
	if s.MaxSessionBytes > 0 {
		return s.MaxSessionBytes
	}
	return DefaultMaxSessionBytes
}

// A read is what reading a session's file found.
type read struct {
	state   SessionState
	updated time.Time
	// end is where the lines read end: the size of the file without a
	// torn last line.
	end, size int64
	legacy    bool
	torn      bool // the last line had no end
	skipped   int  // lines that could not be read
	long      int  // lines over the limit
	// cut says where a legacy file's exchanges stopped being readable.
	cut       string
	exchanges int
	longest   int // the limit of a line
}

func (r *read) damaged() bool { return r.torn || r.skipped > 0 || r.long > 0 || r.cut != "" }

// warnings say what of the file was left out, each once.
func (r *read) warnings() []string {
	var w []string
	if r.torn {
		w = append(w, "the session's last line was cut short (coda stopped while writing it): it is left out, and the next turn's save removes it")
	}
	if r.skipped > 0 {
		w = append(w, fmt.Sprintf("%d lines of the session's file could not be read: they are left out", r.skipped))
	}
	if r.long > 0 {
		w = append(w, fmt.Sprintf("%d lines of the session's file are over the %s a line may take: they are left out", r.long, bytesize.Format(r.longest)))
	}
	if r.cut != "" {
		w = append(w, fmt.Sprintf("the session's history could be read only as far as exchange %d (%s): the rest is left out", r.exchanges+1, r.cut))
	}
	return w
}

// noteOf is what the listing says of a damaged session.
func noteOf(torn, damaged bool) string {
	switch {
	case damaged:
		return "part of its history cannot be read and is left out when it is loaded"
	case torn:
		return "its last turn was cut short by a crash and is left out when it is loaded"
	}
	return ""
}

func (r *read) damagedElse() bool { return r.skipped > 0 || r.long > 0 || r.cut != "" }

// readSession reads session id's file, handing each exchange to each
// (when not nil), up to the offset until (0: the whole file).
func (s *Store) readSession(id string, until int64, each func(*Exchange)) (*read, error) {
	name := s.sessionName(id, jsonlExt)
	f, fi, err := s.openIn(name, os.O_RDONLY)
	if errors.Is(err, fs.ErrNotExist) {
		return s.readLegacy(id, each)
	}
	path := filepath.Join(s.dir, filepath.FromSlash(name))
	if err != nil {
		return nil, s.openFailed(id, path, err)
	}
	defer f.Close()
	if fi.Size() > s.maxSession() {
		return nil, &CorruptError{ID: id, Path: path, Reason: fmt.Sprintf("it is %s, over the %s coda loads", bytesize.Format(int(fi.Size())), bytesize.Format(int(s.maxSession())))}
	}
	var in io.Reader = f
	if until > 0 {
		in = io.LimitReader(f, until)
	}
	r := &read{size: fi.Size(), longest: s.maxLine()}
	err = readLines(in, s.maxLine(), r, id, path, each)
	return r, err
}

// openFailed says why a session's file could not be opened: a file that
// is not a regular one, or a link out of the state directory, is not a
// session's.
func (s *Store) openFailed(id, path string, err error) error {
	if errors.Is(err, errNotRegular) {
		return &CorruptError{ID: id, Path: path, Reason: "it is not a regular file"}
	}
	var pe *fs.PathError
	if errors.As(err, &pe) && !errors.Is(err, fs.ErrPermission) && pe.Err.Error() == "path escapes from parent" {
		return &CorruptError{ID: id, Path: path, Reason: "it is a link that leads out of the state directory"}
	}
	return err
}

// readLines reads a session's lines from in into r.
func readLines(in io.Reader, max int, r *read, id, path string, each func(*Exchange)) error {
	lr := newLineReader(in, 0, max)
	b, err := lr.next()
	if err != nil {
		reason := "it is empty"
		switch {
		case errors.Is(err, errTorn):
			reason = "its first line has no end"
		case errors.Is(err, errLong):
			reason = "its first line is over the limit"
		case !errors.Is(err, io.EOF):
			return err
		}
		return &CorruptError{ID: id, Path: path, Reason: reason}
	}
	if err := r.header(b, id, path); err != nil {
		return err
	}
	r.end = lr.off
	for {
		b, err := lr.next()
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case errors.Is(err, errTorn):
			r.torn = true
			return nil
		case errors.Is(err, errLong):
			r.long++
			r.end = lr.off
			continue
		case err != nil:
			return err
		}
		r.end = lr.off
		var l line
		if err := json.Unmarshal(b, &l); err != nil {
			r.skipped++
			continue
		}
		if !l.At.IsZero() {
			r.updated = l.At
		}
		switch l.Type {
		case lineUpdate:
			if l.Set != nil {
				r.state.apply(l.Set)
			}
		case lineExchange:
			if each == nil {
				r.exchanges++
				continue
			}
			var ex Exchange
			if err := json.Unmarshal(l.Exchange, &ex); err != nil {
				r.skipped++
				continue
			}
			r.exchanges++
			each(&ex)
		}
		// A kind of line a later coda writes is passed over.
	}
}

// header reads the first line.
func (r *read) header(b []byte, id, path string) error {
	corrupt := func(format string, args ...any) error {
		return &CorruptError{ID: id, Path: path, Reason: fmt.Sprintf(format, args...)}
	}
	var l line
	if err := json.Unmarshal(b, &l); err != nil {
		return corrupt("its first line is not a session's header (%v)", err)
	}
	switch {
	case l.Type != lineSession || l.Session == nil:
		return corrupt("its first line is not a session's header")
	case l.Version != sessionVersion:
		return corrupt("version %d (this coda reads versions 1 and %d)", l.Version, sessionVersion)
	case l.Session.ID != id:
		return corrupt("it holds session %q", l.Session.ID)
	case !filepath.IsAbs(l.Session.Cwd):
		return corrupt("cwd %q is not an absolute path", l.Session.Cwd)
	}
	r.state, r.updated = *l.Session, l.At
	return nil
}

// repairTail cuts off a torn last line (a crash mid-append) of f, locked,
// and returns f's size after. before, when not nil, is called before the
// cut (Store.BeforeWrite).
func repairTail(f *os.File, max int, before func()) (int64, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	size := fi.Size()
	if size == 0 {
		return 0, nil
	}
	var last [1]byte
	if _, err := f.ReadAt(last[:], size-1); err != nil {
		return 0, err
	}
	if last[0] == '\n' {
		return size, nil
	}
	// Back to the end of the last whole line.
	buf := make([]byte, 64<<10)
	for at := size; at > 0 && size-at <= int64(max)+1; {
		n := min(int64(len(buf)), at)
		at -= n
		if _, err := f.ReadAt(buf[:n], at); err != nil {
			return 0, err
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			cut := at + int64(i) + 1
			if before != nil {
				before()
			}
			return cut, f.Truncate(cut)
		}
	}
	return 0, fmt.Errorf("%s: %w: no whole line at its end", f.Name(), ErrCorrupt)
}
