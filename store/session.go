package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coda-acp/coda/internal/bytesize"
)

// Sessions (DESIGN §14, §18): STATE/sessions/ID.jsonl, one file a session,
// append-only JSON Lines. The first line is the header (the session as it
// began); each later line is an exchange (a finished turn) or an update
// (what changed of the session: an option, the title, the directories).
// Every line is appended whole, in one write, under an advisory lock on
// the file (lock_*.go), so that several coda processes (one per editor
// window) can append to one session without losing or interleaving a line;
// an exchange is synced to the disk before the turn is answered. A crash
// mid-append leaves a last line without its newline: a load leaves it out
// with one warning, and the next append cuts it off first.
//
// Sessions written by the release before, STATE/sessions/ID.json (one JSON
// object, rewritten whole), still load and list (legacy.go); the first
// append converts such a file to this layout.

const (
	sessionsDir = "sessions"
	// sessionVersion is the layout written; version 1 is legacy.go's.
	sessionVersion = 2
	// jsonlExt and legacyExt end the files of the two layouts.
	jsonlExt  = ".jsonl"
	legacyExt = ".json"
)

// The limits of what a session's file may hold when it is read: a longer
// line is left out with a warning, never held whole; a larger file is not
// loaded.
const (
	DefaultMaxSessionBytes = 1 << 30
	DefaultMaxLineBytes    = 64 << 20
)

// SessionState is what a session is besides its exchanges: its header, with
// every later update taken in.
type SessionState struct {
	ID                    string    `json:"id"`
	Cwd                   string    `json:"cwd"`
	AdditionalDirectories []string  `json:"additionalDirectories,omitempty"`
	Title                 string    `json:"title,omitempty"`
	CreatedAt             time.Time `json:"createdAt"`
	// Output is the session/new _meta.coda.output level, as the client
	// sent it.
	Output json.RawMessage `json:"output,omitempty"`
	// Options are the session's option values by name (output_format,
	// model, effort, mode, or any other): what is absent is the default.
	// The store keeps them without knowing them.
	Options map[string]string `json:"options,omitempty"`
	// Taint is the taint gate's state of the session, kept as its owner
	// encodes it.
	Taint json.RawMessage `json:"taint,omitempty"`
}

// An Exchange is one finished turn as the session's file keeps it. Fields
// added later are ignored by the coda that does not know them, and kept in
// the file.
type Exchange struct {
	// Prompt is the user's prompt as session/load shows it again.
	Prompt []PromptBlock `json:"prompt"`
	// History is the turn as the next turns see it: the prompt the model
	// read and the answer, clipped.
	History Said   `json:"history"`
	RunID   string `json:"runId,omitempty"`
	// Transcript is the turn's conversation as the model was sent it, as
	// its owner (the engine) encoded and bounded it, masked: the next
	// turn is sent it again, so that its request starts as this turn's
	// last did (DESIGN §23). A file from before has none; an exchange
	// too long for its line is kept without it (exchange.go).
	Transcript json.RawMessage `json:"transcript,omitempty"`
	// Streamed are the update objects of the text the turn streamed before
	// its closing chunks (its commentary, thoughts, a chat agent's reply),
	// in order, as their owner encoded and bounded them: session/load
	// replays them before Closing. A file from before they were kept has
	// none, and replays without them.
	Streamed []json.RawMessage `json:"streamed,omitempty"`
	// Closing are the update objects of the chunks the turn closed with,
	// exactly as they were sent.
	Closing []json.RawMessage `json:"closing,omitempty"`
	// ClientGone says the client went away before the turn ended: it ran
	// on to its answer, which nobody saw until a session/load replays it
	// (DESIGN §21).
	ClientGone bool `json:"clientGone,omitempty"`
}

// A PromptBlock is a prompt's content block as replayed: text or a link.
type PromptBlock struct {
	Type     string `json:"type"` // "text" or "resource_link"
	Text     string `json:"text,omitempty"`
	URI      string `json:"uri,omitempty"`
	Name     string `json:"name,omitempty"`
	Title    string `json:"title,omitempty"`
	MimeType string `json:"mimeType,omitempty"`
}

// Said is a turn's prompt and answer as the next turns see them. (The
// release before wrote them "Prompt" and "Answer", which read the same.)
type Said struct {
	Prompt string `json:"prompt"`
	Answer string `json:"answer"`
	// Masked says a secret was masked in them: the run's record has them
	// in clear, so a later run's prompt.md writes them out as sent.
	Masked bool `json:"masked,omitempty"`
}

// A line of a session's file.
type line struct {
	Type     string          `json:"type"` // "session", "update", "exchange"
	Version  int             `json:"version,omitempty"`
	At       time.Time       `json:"at"`
	Session  *SessionState   `json:"session,omitempty"`
	Set      *change         `json:"set,omitempty"`
	Exchange json.RawMessage `json:"exchange,omitempty"`
}

const (
	lineSession  = "session"
	lineUpdate   = "update"
	lineExchange = "exchange"
)

// A change is an update line: the fields of the session that changed. An
// option set to "" is back to its default.
type change struct {
	Cwd                   *string           `json:"cwd,omitempty"`
	AdditionalDirectories *[]string         `json:"additionalDirectories,omitempty"`
	Title                 *string           `json:"title,omitempty"`
	Output                json.RawMessage   `json:"output,omitempty"`
	Options               map[string]string `json:"options,omitempty"`
	Taint                 json.RawMessage   `json:"taint,omitempty"`
}

// changeFrom is what changed from old to now; nil when nothing did.
func changeFrom(old, now *SessionState) *change {
	c := &change{}
	some := false
	if now.Cwd != old.Cwd {
		c.Cwd, some = &now.Cwd, true
	}
	if !slices.Equal(now.AdditionalDirectories, old.AdditionalDirectories) {
		dirs := nonNil(now.AdditionalDirectories)
		c.AdditionalDirectories, some = &dirs, true
	}
	if now.Title != old.Title {
		c.Title, some = &now.Title, true
	}
	if string(now.Output) != string(old.Output) {
		c.Output, some = now.Output, true
	}
	if string(now.Taint) != string(old.Taint) {
		c.Taint, some = now.Taint, true
	}
	for k, v := range now.Options {
		if old.Options[k] != v {
			if c.Options == nil {
				c.Options = map[string]string{}
			}
			c.Options[k], some = v, true
		}
	}
	for k := range old.Options {
		if _, ok := now.Options[k]; !ok {
			if c.Options == nil {
				c.Options = map[string]string{}
			}
			c.Options[k], some = "", true
		}
	}
	if !some {
		return nil
	}
	return c
}

// apply takes an update in.
func (st *SessionState) apply(c *change) {
	if c.Cwd != nil {
		st.Cwd = *c.Cwd
	}
	if c.AdditionalDirectories != nil {
		st.AdditionalDirectories = *c.AdditionalDirectories
		if len(st.AdditionalDirectories) == 0 {
			st.AdditionalDirectories = nil
		}
	}
	if c.Title != nil {
		st.Title = *c.Title
	}
	if c.Output != nil {
		st.Output = c.Output
	}
	if c.Taint != nil {
		st.Taint = c.Taint
	}
	for k, v := range c.Options {
		if st.Options == nil {
			st.Options = map[string]string{}
		}
		if v == "" {
			delete(st.Options, k)
		} else {
			st.Options[k] = v
		}
	}
}

// clone copies what st holds that a change would share.
func (st SessionState) clone() SessionState {
	st.AdditionalDirectories = slices.Clone(st.AdditionalDirectories)
	st.Options = maps.Clone(st.Options)
	return st
}

// Errors of the sessions' files.
var (
	// ErrNoSession: no file holds the session (never made, or deleted).
	ErrNoSession = errors.New("no such session")
	// ErrCorrupt: the file is not a session's (CorruptError says why).
	ErrCorrupt = errors.New("corrupt session file")
	// ErrSessionFull: the file holds as much as a session's may
	// (Store.MaxSessionBytes). What would grow it past that is not
	// written, so that the session still loads, as it was.
	ErrSessionFull = errors.New("the session's file is full")
)

// A CorruptError is a file that cannot be read as session ID's.
type CorruptError struct {
	ID     string
	Path   string
	Reason string
}

func (e *CorruptError) Error() string { return ErrCorrupt.Error() + ": " + e.Reason }
func (e *CorruptError) Unwrap() error { return ErrCorrupt }

// maxSessionID bounds a session id: it is a file name.
const maxSessionID = 128

// CheckSessionID says why id cannot name a session's file, or nil: a
// session id is letters, digits, '-', '_' and '.', not leading '.', no
// "..", at most 128 bytes.
func CheckSessionID(id string) error {
	bad := id == "" || len(id) > maxSessionID || id[0] == '.' || strings.Contains(id, "..")
	for i := 0; i < len(id) && !bad; i++ {
		c := id[i]
		bad = !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.')
	}
	if bad {
		shown := id
		if len(shown) > 40 {
			shown = strings.ToValidUTF8(shown[:40], "") + "…"
		}
		return fmt.Errorf("sessionId %q is not a session id coda made (letters, digits, '-', '_' and '.', at most %d)", shown, maxSessionID)
	}
	return nil
}

// A Session is an open session's file: what this process last read or
// wrote of it, so that each save writes only what changed, and each turn
// can take in what other processes appended meanwhile (Refresh).
type Session struct {
	st *Store
	id string

	mu sync.Mutex
	// file is the state as the file holds it, as far as end.
	file SessionState
	// end is the file's size after the last whole line read or written;
	// loaded is where the load read to, what Replay replays.
	end, loaded int64
	// legacy: the file is ID.json, of the release before; the first
	// append converts it.
	legacy bool
	// torn: the file's last line was cut short, until the next append
	// cuts it off; damaged: other lines of it cannot be read. The listing
	// notes either.
	torn, damaged bool
	// updated is the time of the file's latest line.
	updated time.Time
	// others are the exchanges other processes appended, read but not
	// yet handed to Refresh.
	others []*Exchange
}

func (s *Store) sessionName(id, ext string) string { return sessionsDir + "/" + id + ext }

// CreateSession writes a new session's file: its header, synced.
func (s *Store) CreateSession(state SessionState) (*Session, error) {
	if err := CheckSessionID(state.ID); err != nil {
		return nil, err
	}
	now := time.Now().UTC()
	state = state.clone()
	b, err := marshalPlain(&line{Type: lineSession, Version: sessionVersion, At: now, Session: &state})
	if err != nil {
		return nil, err
	}
	b = append(b, '\n')
	path := filepath.Join(s.dir, sessionsDir, state.ID+jsonlExt)
	err = s.writeWhole(path, true, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
	if err != nil {
		return nil, err
	}
	ss := &Session{st: s, id: state.ID, file: state, end: int64(len(b)), loaded: int64(len(b)), updated: now}
	s.index().put(ss.info(int64(len(b))))
	return ss, nil
}

// Save writes what changed of the session since the file last said, as an
// update line; nothing when nothing did. It is not synced: a crash loses
// at most what the editor can set again.
func (ss *Session) Save(state SessionState) error {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	c := changeFrom(&ss.file, &state)
	if c == nil {
		return nil
	}
	return ss.append(c, nil, false)
}

// Append writes a finished turn, with what changed of the session, and
// syncs it to the disk before it returns.
func (ss *Session) Append(state SessionState, ex *Exchange) error {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.append(changeFrom(&ss.file, &state), ex, true)
}

// append writes an update line (c, when not nil) and an exchange line (ex,
// when not nil), in one write.
func (ss *Session) append(c *change, ex *Exchange, sync bool) error {
	now := time.Now().UTC()
	var b []byte
	if c != nil {
		enc, err := marshalPlain(&line{Type: lineUpdate, At: now, Set: c})
		if err != nil {
			return err
		}
		if len(enc)+1 > ss.maxLine() {
			return fmt.Errorf("%w: the session's update is %s", ErrLineTooLong, bytesize.Format(len(enc)+1))
		}
		b = append(append(b, enc...), '\n')
	}
	if ex != nil {
		enc, err := exchangeLine(ex, now, ss.maxLine())
		if err != nil {
			return err
		}
		b = append(b, enc...)
	}
	size, err := ss.write(b, sync)
	if err != nil {
		return err
	}
	if c != nil {
		ss.file.apply(c)
	}
	ss.updated, ss.torn = now, false
	if sync { // a turn's: its answer waits for the append, not for the index
		ss.st.index().later(ss.info(size))
	} else {
		ss.st.index().put(ss.info(size))
	}
	return nil
}

// write appends b, whole lines, to the file under its lock, the torn line a
// crash left at its end cut off first, and returns the file's size after.
func (ss *Session) write(b []byte, sync bool) (int64, error) {
	s := ss.st
	if ss.legacy {
		size, err := ss.convert(b)
		if !errors.Is(err, errConverted) {
			return size, err
		}
		// Another process converted it first: append to its file.
	}
	name := s.sessionName(ss.id, jsonlExt)
	f, _, err := s.openIn(name, os.O_RDWR|os.O_APPEND)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, fmt.Errorf("%w: session %s was deleted (by another coda?)", ErrNoSession, ss.id)
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	path := filepath.Join(s.dir, filepath.FromSlash(name))
	if err := s.lock(f, path); err != nil {
		return 0, err
	}
	defer unlockFile(f)
	before := s.hookAt(path)
	size, err := repairTail(f, ss.maxLine(), before)
	if err != nil {
		return 0, err
	}
	if err := ss.readPast(f, size); err != nil {
		return 0, err
	}
	if limit := s.maxSession(); size+int64(len(b)) > limit {
		return 0, fmt.Errorf("%w: it holds %s, and coda loads no session over %s", ErrSessionFull, bytesize.Format(int(size)), bytesize.Format(int(limit)))
	}
	if before != nil {
		before()
	}
	if _, err := f.Write(b); err != nil {
		// A short write leaves a torn line, which the next append cuts.
		return 0, err
	}
	if sync {
		if err := f.Sync(); err != nil {
			return 0, err
		}
	}
	ss.end = size + int64(len(b))
	return ss.end, nil
}

func (ss *Session) maxLine() int { return ss.st.maxLine() }

// lock locks a session's file f (at path) for an append, waiting while
// another process holds it.
func (s *Store) lock(f *os.File, path string) error {
	ok, err := tryLockFile(f)
	if ok || err != nil {
		return err
	}
	if s.BeforeLockWait != nil {
		s.BeforeLockWait(path)
	}
	return lockFile(f)
}

// info is the session as the listing shows it, its file size at size.
func (ss *Session) info(size int64) SessionInfo {
	return SessionInfo{ID: ss.id, Cwd: ss.file.Cwd, AdditionalDirectories: ss.file.AdditionalDirectories,
		Title: ss.file.Title, UpdatedAt: ss.updated, Note: noteOf(ss.torn, ss.damaged), size: size, legacy: ss.legacy}
}

// A Loaded session is what LoadSession read.
type Loaded struct {
	Session *Session
	// State is the session as its file says now.
	State SessionState
	// UpdatedAt is the time of its latest line.
	UpdatedAt time.Time
	// Warnings say what of the file could not be read (a torn last line, a
	// line that is not a session's), each once.
	Warnings []string
}

// LoadSession reads session id's file: its state, and each exchange, oldest
// first, handed to each. A file that is not a session's is a CorruptError;
// a missing one ErrNoSession. Lines that cannot be read are left out, with
// a warning: a session whose header is whole always loads.
func (s *Store) LoadSession(id string, each func(*Exchange)) (*Loaded, error) {
	if s == nil {
		return nil, fmt.Errorf("%w: no state directory", ErrNoSession)
	}
	if err := CheckSessionID(id); err != nil {
		return nil, err
	}
	r, err := s.readSession(id, 0, each)
	if err != nil {
		return nil, err
	}
	ss := &Session{st: s, id: id, file: r.state.clone(), end: r.end, loaded: r.end, legacy: r.legacy,
		torn: r.torn, damaged: r.damagedElse(), updated: r.updated}
	if r.damaged() {
		s.index().put(ss.info(r.size))
	}
	return &Loaded{Session: ss, State: r.state, UpdatedAt: r.updated, Warnings: r.warnings()}, nil
}

// Replay hands each exchange the load read to each again, oldest first,
// reading the file anew: a long session is never held whole.
func (ss *Session) Replay(each func(*Exchange)) error {
	ss.mu.Lock()
	until, legacy := ss.loaded, ss.legacy
	ss.mu.Unlock()
	if legacy {
		_, err := ss.st.readLegacy(ss.id, each)
		return err
	}
	_, err := ss.st.readSession(ss.id, until, each)
	return err
}

// Refresh hands each the exchanges other processes appended to the file
// since this one last read or wrote it (their History, RunID and
// Transcript), oldest
// first, and takes in their updates: a live session's next turn sees the
// session as its file has it. It reads only what was appended.
func (ss *Session) Refresh(each func(*Exchange)) error {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if !ss.legacy {
		f, fi, err := ss.st.openIn(ss.st.sessionName(ss.id, jsonlExt), os.O_RDONLY)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if err == nil {
			err = ss.readPast(f, fi.Size())
			f.Close()
			if err != nil {
				return err
			}
		}
	}
	for _, ex := range ss.others {
		each(ex)
	}
	ss.others = nil
	return nil
}

// readPast reads the whole lines of f from ss.end up to size, which other
// processes wrote: their exchanges are kept for Refresh, their updates
// taken in.
func (ss *Session) readPast(f *os.File, size int64) error {
	if size <= ss.end {
		return nil
	}
	lr := newLineReader(io.NewSectionReader(f, ss.end, size-ss.end), ss.end, ss.maxLine())
	for {
		b, err := lr.next()
		switch {
		case errors.Is(err, errLong):
			ss.end = lr.off
			continue
		case err != nil:
			return nil // the end, or a line still being written
		}
		ss.end = lr.off
		var l line
		if json.Unmarshal(b, &l) != nil {
			continue
		}
		ss.updated = l.At
		switch l.Type {
		case lineUpdate:
			if l.Set != nil {
				ss.file.apply(l.Set)
			}
		case lineExchange:
			var ex Exchange
			if json.Unmarshal(l.Exchange, &ex) == nil {
				ss.others = append(ss.others, &Exchange{History: ex.History, RunID: ex.RunID, Transcript: ex.Transcript})
			}
		}
	}
}

// DeleteSession removes session id's file, of either layout. Deleting a
// session that is not there is no error.
func (s *Store) DeleteSession(id string) error {
	if s == nil {
		return nil
	}
	if err := CheckSessionID(id); err != nil {
		return err
	}
	var first error
	for _, ext := range []string{jsonlExt, legacyExt} {
		path := filepath.Join(s.dir, sessionsDir, id+ext)
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) && first == nil {
			first = err
		}
	}
	s.index().remove(id)
	return first
}
