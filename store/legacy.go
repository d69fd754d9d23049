package store

import (
	"bufio"
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

// The sessions of the release before: STATE/sessions/ID.json, one JSON
// object rewritten whole after every turn, its header fields before its
// exchanges, which come last:
//
//	{"version":1,"id":…,"cwd":…,"title":…,"createdAt":…,"updatedAt":…,
//	 "output":…,"options":{…},"exchanges":[{…},…]}
//
// They load and list as they did; the first append converts one to the
// append-only layout (convert), and removes it.

const legacyVersion = 1

// legacyHeader is such a file's fields before its exchanges.
type legacyHeader struct {
	Version               int               `json:"version"`
	ID                    string            `json:"id"`
	Cwd                   string            `json:"cwd"`
	AdditionalDirectories []string          `json:"additionalDirectories,omitempty"`
	Title                 string            `json:"title,omitempty"`
	CreatedAt             time.Time         `json:"createdAt"`
	UpdatedAt             time.Time         `json:"updatedAt"`
	Output                json.RawMessage   `json:"output,omitempty"`
	Options               map[string]string `json:"options"`
}

// readLegacy reads session id's file of the release before, handing each
// exchange to each (when not nil). Its exchanges are read one at a time;
// where one cannot be read, the rest are left out (read.cut).
func (s *Store) readLegacy(id string, each func(*Exchange)) (*read, error) {
	name := s.sessionName(id, legacyExt)
	path := filepath.Join(s.dir, filepath.FromSlash(name))
	f, fi, err := s.openIn(name, os.O_RDONLY)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s", ErrNoSession, id)
	}
	if err != nil {
		return nil, s.openFailed(id, path, err)
	}
	defer f.Close()
	if fi.Size() > s.maxSession() {
		return nil, &CorruptError{ID: id, Path: path, Reason: fmt.Sprintf("it is %s, over the %s coda loads", bytesize.Format(int(fi.Size())), bytesize.Format(int(s.maxSession())))}
	}
	r := &read{legacy: true, size: fi.Size(), end: fi.Size()}
	corrupt := func(format string, args ...any) error {
		return &CorruptError{ID: id, Path: path, Reason: fmt.Sprintf(format, args...)}
	}
	dec := json.NewDecoder(bufio.NewReaderSize(f, 64<<10))
	h, atExchanges, err := decodeLegacyHeader(dec)
	if err != nil {
		return nil, corrupt("%v", err)
	}
	switch {
	case h.Version != legacyVersion:
		return nil, corrupt("version %d (this coda reads versions 1 and %d)", h.Version, sessionVersion)
	case h.ID != id:
		return nil, corrupt("it holds session %q", h.ID)
	case !filepath.IsAbs(h.Cwd):
		return nil, corrupt("cwd %q is not an absolute path", h.Cwd)
	}
	r.state = SessionState{ID: h.ID, Cwd: h.Cwd, AdditionalDirectories: h.AdditionalDirectories, Title: h.Title,
		CreatedAt: h.CreatedAt, Output: h.Output, Options: nonEmpty(h.Options)}
	r.updated = h.UpdatedAt
	if !atExchanges {
		return r, nil
	}
	tok, err := dec.Token()
	if err != nil || (tok != json.Delim('[') && tok != nil) { // null: none
		r.cut = fmt.Sprintf("exchanges: not an array (%v)", eofUnexpected(err))
		return r, nil
	}
	if tok == nil {
		return r, nil
	}
	for dec.More() {
		var ex Exchange
		if err := dec.Decode(&ex); err != nil {
			r.cut = eofUnexpected(err).Error()
			return r, nil
		}
		r.exchanges++
		if each != nil {
			each(&ex)
		}
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim(']') {
		r.cut = fmt.Sprintf("the exchanges do not end (%v)", eofUnexpected(err))
	}
	return r, nil
}

// nonEmpty drops the options set to "" (the default).
func nonEmpty(o map[string]string) map[string]string {
	for k, v := range o {
		if v == "" {
			delete(o, k)
		}
	}
	if len(o) == 0 {
		return nil
	}
	return o
}

// decodeLegacyHeader reads the fields before "exchanges", leaving dec at
// the exchanges' value; atExchanges is false when the file has none.
func decodeLegacyHeader(dec *json.Decoder) (h *legacyHeader, atExchanges bool, err error) {
	h = &legacyHeader{}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false, fmt.Errorf("not a JSON object (%v)", err)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false, eofUnexpected(err)
		}
		var v any
		switch tok {
		case "exchanges":
			return h, true, nil
		case "version":
			v = &h.Version
		case "id":
			v = &h.ID
		case "cwd":
			v = &h.Cwd
		case "additionalDirectories":
			v = &h.AdditionalDirectories
		case "title":
			v = &h.Title
		case "createdAt":
			v = &h.CreatedAt
		case "updatedAt":
			v = &h.UpdatedAt
		case "output":
			v = &h.Output
		case "options":
			v = &h.Options
		default:
			v = new(json.RawMessage)
		}
		if err := dec.Decode(v); err != nil {
			return nil, false, fmt.Errorf("%s: %v", tok, eofUnexpected(err))
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, false, eofUnexpected(err)
	}
	return h, false, nil
}

// eofUnexpected makes a file's early end an unexpected one.
func eofUnexpected(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// errConverted says another process converted the file first.
var errConverted = errors.New("converted by another process")

// convert writes the session's file anew in the append-only layout: its
// header and exchanges as the old file has them, then b; then removes the
// old file (set aside as ID.json.corrupt when part of it could not be
// read). The old file is locked meanwhile, so two processes never convert
// it both; the one that finds it converted gets errConverted. It returns
// the new file's size.
func (ss *Session) convert(b []byte) (int64, error) {
	s := ss.st
	oldName := s.sessionName(ss.id, legacyExt)
	oldPath := filepath.Join(s.dir, filepath.FromSlash(oldName))
	newPath := filepath.Join(s.dir, sessionsDir, ss.id+jsonlExt)
	old, _, err := s.openIn(oldName, os.O_RDWR)
	if errors.Is(err, fs.ErrNotExist) {
		ss.legacy = false
		if _, err := os.Lstat(newPath); err == nil {
			return 0, errConverted
		}
		return 0, fmt.Errorf("%w: session %s was deleted (by another coda?)", ErrNoSession, ss.id)
	}
	if err != nil {
		return 0, err
	}
	defer old.Close()
	if err := lockFile(old); err != nil {
		return 0, err
	}
	defer unlockFile(old)
	if _, err := os.Lstat(newPath); err == nil {
		ss.legacy = false
		return 0, errConverted
	}
	var size int64
	var r *read
	limit := s.maxSession()
	err = s.writeWhole(newPath, true, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 64<<10)
		head := ss.file.clone()
		at := ss.updated
		enc, err := marshalPlain(&line{Type: lineSession, Version: sessionVersion, At: at, Session: &head})
		if err != nil {
			return err
		}
		bw.Write(append(enc, '\n'))
		// The new layout's lines are longer than the old file's entries
		// (a type and a time each): an old file near the limit, with b,
		// may not fit it. Then nothing is converted, and the append is
		// refused as any other past the limit (ErrSessionFull).
		written := int64(len(enc) + 1)
		var werr error
		r, err = s.readLegacy(ss.id, func(ex *Exchange) {
			if werr != nil {
				return
			}
			// An exchange the old file held whole, longer than a line
			// may be, is cut to fit, not written as a line no load
			// takes.
			raw, err := exchangeLine(ex, at, ss.maxLine())
			if err != nil {
				werr = err
				return
			}
			written += int64(len(raw))
			bw.Write(raw)
		})
		if err != nil {
			return err
		}
		if werr != nil {
			return werr
		}
		if written+int64(len(b)) > limit {
			return fmt.Errorf("%w: written anew as append-only lines it would hold %s, and coda loads no session over %s", ErrSessionFull, bytesize.Format(int(written)+len(b)), bytesize.Format(int(limit)))
		}
		bw.Write(b)
		return bw.Flush()
	})
	if err != nil {
		return 0, err
	}
	ss.legacy, ss.damaged = false, false // what could not be read is set aside
	if r.damaged() {
		err = os.Rename(oldPath, oldPath+".corrupt")
	} else {
		err = os.Remove(oldPath)
	}
	if err != nil {
		return 0, err
	}
	fi, err := os.Stat(newPath)
	if err == nil {
		size = fi.Size()
	}
	ss.end = size
	return size, nil
}
