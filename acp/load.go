package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"

	"github.com/coda-acp/coda/acp/editor"
	"github.com/coda-acp/coda/acp/history"
	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/taint"
	"github.com/coda-acp/coda/internal/jsonrpc"
	statestore "github.com/coda-acp/coda/store"
)

// Sessions that last: saving a session to its file, and session/load,
// session/resume and session/delete (session/list is list.go's).
//
// Loading a session that is open in this process restores it afresh from
// its file, as a new process would, unless a turn runs in it: then the load
// is refused until the turn has answered. A load or resume may give another
// cwd than the session had (the project moved): the session goes on there.
// A file that cannot be read as a session's is refused -32602, naming the
// file (-32000 would tell a client to authenticate).

// A loader owns the sessions that outlive coda: their files (the store's)
// written and read, the sessions being restored, and the methods on them
// (session/load, resume, fork, list, delete: its handlers, in the method
// table through ofLoader). What it restores it hands to the server: the
// open sessions are the server's registry (Server.sessions, under
// Server.mu, which guards loading too), a restored session's workspace,
// outputs and response the server's.
type loader struct {
	srv *Server
	log *slog.Logger
	// store keeps the sessions' files (the engine's store); nil without a
	// state directory.
	store *statestore.Store
	// loading are the sessions a load, resume or fork is restoring, by
	// id; under srv.mu.
	loading map[string]*restore
}

func newLoader(srv *Server, store *statestore.Store) *loader {
	return &loader{srv: srv, log: srv.log, store: store, loading: map[string]*restore{}}
}

// keeps reports whether sessions outlive coda: they need a state
// directory.
func (l *loader) keeps() bool { return l.store != nil }

// sessionCapabilities are initialize's agentCapabilities.sessionCapabilities.
func (l *loader) sessionCapabilities() sessionCapabilities {
	served := &struct{}{}
	caps := sessionCapabilities{Close: served, AdditionalDirectories: served}
	if l.keeps() {
		caps.List, caps.Resume, caps.Delete, caps.Fork = served, served, served, served
	}
	return caps
}

// checkDirs checks a session's cwd and additional directories: absolute
// paths, the cwd required. It returns the cwd, cleaned.
func checkDirs(cwd string, additional []string) (string, error) {
	if !filepath.IsAbs(cwd) {
		return "", fmt.Errorf("%w: cwd: %q is not an absolute path", ErrInvalidParams, cwd)
	}
	for i, d := range additional {
		if !filepath.IsAbs(d) {
			return "", fmt.Errorf("%w: additionalDirectories[%d]: %q is not an absolute path", ErrInvalidParams, i, d)
		}
	}
	return filepath.Clean(cwd), nil
}

// saveSession writes what changed of the session to its file, with ex, a
// finished turn, appended when not nil (synced before it returns); a new
// session's file is made. A failure is logged and returned as a warning
// for the client: it never fails the request or the turn.
func (l *loader) saveSession(sess *session, ex *statestore.Exchange) string {
	if !l.keeps() {
		return ""
	}
	sess.saving.Lock()
	defer sess.saving.Unlock()
	if sess.gone {
		return ""
	}
	state := stateOf(sess)
	var err error
	switch {
	case sess.file == nil:
		sess.file, err = l.store.CreateSession(state)
	case ex == nil:
		err = sess.file.Save(state)
	default:
		err = sess.file.Append(state, ex)
	}
	if err != nil {
		w := history.SaveWarning(sess.id, err)
		l.log.Warn(w)
		return w
	}
	return ""
}

// saveTurn records a finished turn in the session's file: the prompt as the
// user sent it, the exchange the next turns see, the text it streamed
// (streamed.go) and the closing chunks as they were sent. A cancelled turn
// leaves no exchange, as it leaves none in the session's history. gone
// marks a turn that ran on after its client went away (DESIGN §21). It
// returns a warning when the file could not be written.
func (l *loader) saveTurn(sess *session, prompt []contentBlock, runID string, ex engine.Exchange, streamed []json.RawMessage, closing [][]byte, status string, gone bool) string {
	if status == engine.StatusCancelled {
		return l.saveSession(sess, nil)
	}
	stored := history.Exchange(blocksOf(prompt), runID, ex, streamed, closing)
	stored.ClientGone = gone
	return l.saveSession(sess, stored)
}

// catchUp takes into the session's history the turns other coda processes
// appended to its file since this one last read it (two editor windows on
// one session): a live session's next turn sees every exchange its file
// holds, in the order they were written. turn gets the history anew when
// there were any.
func (l *loader) catchUp(sess *session, turn *engine.Turn) {
	if sess.file == nil {
		return
	}
	got, err := history.Refresh(sess.file)
	if err != nil {
		l.log.Warn("reading what other coda processes added to a session", "session", sess.id, "err", err)
	}
	if len(got) == 0 {
		return
	}
	sess.mu.Lock()
	sess.history = engine.KeepHistory(append(sess.history, got...))
	turn.History = append([]engine.Exchange(nil), sess.history...)
	sess.mu.Unlock()
}

// loadSession handles session/load: the session is restored from its
// file, and its history replayed before the answer. Everything a load
// sends (the replay, the commands, the title) comes before its response:
// a client may take the response as the end of the session's history.
//
// A load, like a resume and a list, reads files whose size is the user's
// history: it runs off the read loop (aside), so that a cancel or a
// prompt in another session is never held behind it. Until it answers,
// the session is being loaded: a request naming it is refused (loading).
func (l *loader) loadSession(ctx context.Context, r *request[loadSessionResponse], p *loadSessionRequest) (*loadSessionResponse, error) {
	ld, err := l.beginRestore(r.Method(), p)
	if err != nil {
		return nil, err
	}
	return aside(ctx, r, ld.end, func(ctx context.Context) (*loadSessionResponse, error) {
		sess, res, err := l.restoreSession(ctx, ld, p, true)
		if err != nil {
			return nil, err
		}
		l.srv.announce(sess, res.Meta)()
		return res, nil
	})
}

// resumeSession handles session/resume: the session is restored from its
// file, without a replay; its commands and title come before the
// response, as a load's do. It runs off the read loop, as a load does.
func (l *loader) resumeSession(ctx context.Context, r *request[resumeSessionResponse], p *resumeSessionRequest) (*resumeSessionResponse, error) {
	ld, err := l.beginRestore(r.Method(), p)
	if err != nil {
		return nil, err
	}
	return aside(ctx, r, ld.end, func(ctx context.Context) (*resumeSessionResponse, error) {
		sess, res, err := l.restoreSession(ctx, ld, p, false)
		if err != nil {
			return nil, err
		}
		l.srv.announce(sess, res.Meta)()
		return (*resumeSessionResponse)(res), nil
	})
}

// A restore is a load or resume between its checks, on the read loop, and
// its answer: the session it restores is being loaded meanwhile.
type restore struct {
	l          *loader
	method, id string
	cwd        string
	commentary string
	old        *session // the session, when it is open in this process
}

// loading refuses a request naming a session that is being loaded.
func loadingErr(id string) error {
	return fmt.Errorf("%w: session %s is being loaded: wait for the answer to its session/load or session/resume", ErrInvalidParams, id)
}

// beginRestore checks a load's or resume's params on the read loop and
// marks the session as being loaded.
func (l *loader) beginRestore(method string, p *loadSessionRequest) (*restore, error) {
	id := *p.SessionID
	cwd, commentary, err := l.checkRestore(p)
	if err != nil {
		return nil, err
	}
	l.srv.mu.Lock()
	defer l.srv.mu.Unlock()
	if l.loading[id] != nil {
		return nil, loadingErr(id)
	}
	old := l.srv.sessions[id]
	if old != nil {
		old.mu.Lock()
		busy := old.running != nil
		old.mu.Unlock()
		if busy {
			return nil, fmt.Errorf("%w: session %s is answering a prompt: wait for its response (or cancel it), then %s it", ErrInvalidParams, id, method)
		}
	}
	ld := &restore{l: l, method: method, id: id, cwd: cwd, commentary: commentary, old: old}
	l.loading[id] = ld
	return ld, nil
}

// checkRestore checks the params a load, a resume and a fork share: the
// session's id, its directories (the cwd cleaned) and its commentary, with
// sessions kept.
func (l *loader) checkRestore(p *loadSessionRequest) (cwd, commentary string, err error) {
	if err := checkSessionID(*p.SessionID); err != nil {
		return "", "", err
	}
	if cwd, err = checkDirs(*p.Cwd, p.AdditionalDirectories); err != nil {
		return "", "", err
	}
	if commentary, err = p.Meta.commentary(); err != nil {
		return "", "", err
	}
	if !l.keeps() {
		return "", "", fmt.Errorf("%w: coda runs without a state directory, so it keeps no sessions", ErrInvalidParams)
	}
	return cwd, commentary, nil
}

// end says the session is no longer being loaded; once the restore has
// put it among the open sessions, or failed.
func (ld *restore) end() {
	ld.l.srv.mu.Lock()
	ld.done()
	ld.l.srv.mu.Unlock()
}

// done is end under the server's lock; a later load of the session, begun
// since, is its own.
func (ld *restore) done() {
	if ld.l.loading[ld.id] == ld {
		delete(ld.l.loading, ld.id)
	}
}

// restoreSession restores a session from its file for a load or resume,
// off the read loop, and says what to answer; with replay, its history is
// sent first.
func (l *loader) restoreSession(ctx context.Context, ld *restore, p *loadSessionRequest, replay bool) (*session, *loadSessionResponse, error) {
	s, id, cwd, commentary, old := l.srv, ld.id, ld.cwd, ld.commentary, ld.old
	s.startListing() // asked while the file is read; awaited before the answer
	read, kept, err := l.readSession(id)
	if err != nil {
		return nil, nil, err
	}
	f := &read.State
	sess, err := l.restore(read, kept, cwd, p.AdditionalDirectories)
	if err != nil {
		return nil, nil, err
	}
	changed := commentary != "" && commentary != sess.commentary
	if changed {
		sess.commentary = commentary // the load's, kept from now on
	}
	if old != nil {
		s.mu.Lock()
		delete(s.sessions, id)
		s.mu.Unlock()
		old.stopMCP()
	}
	if err := sess.startMCP(s.mcp, p.MCPServers); err != nil {
		return nil, nil, err
	}
	if replay {
		if err := history.Replay(ctx, sess.file, func(u []byte) { s.writeUpdate(id, u) }); err != nil {
			l.log.Warn("replaying a session: its file changed since it was read", "session", id, "err", err)
		}
	}
	// The answer's model option has the providers' list, so that nothing
	// follows the answer for the session (listed.go); waited for while the
	// session is still being loaded.
	s.awaitListed(ctx, maxListWait)
	s.mu.Lock()
	s.sessions[id] = sess
	ld.done() // a prompt sent on reading the answer finds the session
	s.mu.Unlock()
	warnings := read.Warnings
	if changed || cwd != f.Cwd || !slices.Equal(p.AdditionalDirectories, f.AdditionalDirectories) {
		if w := l.saveSession(sess, nil); w != "" {
			warnings = append(warnings, w)
		}
	}
	return sess, s.sessionResponse(sess, warnings...), nil
}

// readSession reads a session's file for load and resume
// (history.Read), saying plainly why it cannot be used.
func (l *loader) readSession(id string) (*statestore.Loaded, []engine.Exchange, error) {
	read, kept, err := history.Read(l.store, id)
	switch {
	case errors.Is(err, statestore.ErrNoSession):
		return nil, nil, fmt.Errorf("%w: unknown session %q", ErrNotFound, id)
	case errors.Is(err, ErrInvalidParams):
		l.log.Warn("a session's file is corrupt", "session", id, "err", err)
		return nil, nil, err
	case err != nil:
		return nil, nil, err
	}
	for _, w := range read.Warnings {
		l.log.Warn("loading a session: "+w, "session", id)
	}
	return read, kept, nil
}

// restore makes a session of its file, in cwd: its output levels and
// options as they were, and the history its next turn can use.
func (l *loader) restore(read *statestore.Loaded, history []engine.Exchange, cwd string, additional []string) (*session, error) {
	s, f := l.srv, &read.State
	sess := &session{
		id: f.ID, cwd: cwd, additional: additional, metaRaw: f.Output,
		title: f.Title, createdAt: f.CreatedAt, toolSupport: engine.NewToolSupport(), file: read.Session, private: taint.NewIndex(),
	}
	keptOptions(sess, f.Options)
	if len(f.Taint) > 0 {
		if err := json.Unmarshal(f.Taint, &sess.taint); err != nil {
			return nil, fmt.Errorf("session %s cannot be restored: its taint: %v", f.ID, err)
		}
	}
	if !knownMode(sess.mode) {
		sess.mode = modeAsk
	}
	var err error
	if len(f.Output) > 0 {
		if sess.meta, err = s.out.MetaLevel(f.Output, cwd); err != nil {
			return nil, fmt.Errorf("session %s cannot be restored: its output spec: %w", f.ID, err)
		}
	}
	if sess.outputs, err = s.out.Session(sess.meta, sess.config); err != nil {
		return nil, fmt.Errorf("session %s cannot be restored: %w", f.ID, err)
	}
	sess.history = history
	s.workspace(sess)
	return sess, nil
}

// workspace gives a session its workspace: the editor's, in the session's
// directories, its permission requests answered by the session's mode.
func (s *Server) workspace(sess *session) {
	caps := s.caps.Get()
	sess.ws = editor.New(editor.Options{Conn: s.conn, SessionID: sess.id, Cwd: sess.cwd, Additional: sess.additional, ClientCaps: caps, Timeout: s.opts.EditorTimeout, ToolCall: toolCallObject})
	bindMode(sess)
}

// writeUpdate sends a session/update whose update object is update,
// already encoded.
func (s *Server) writeUpdate(sessionID string, update []byte) {
	b := appendUpdateHead(make([]byte, 0, len(update)+96), sessionID)
	b = append(b, update...)
	b = append(b, "}}"...)
	if err := s.conn.Write(b); err != nil {
		s.log.Debug("writing a session/update", "err", err)
	}
}

// deleteSession handles session/delete: the session's file is removed
// (its run records stay), and the session closed if it is open, as
// session/close closes it.
func (l *loader) deleteSession(ctx context.Context, r *request[deleteSessionResponse], p *deleteSessionRequest) (*deleteSessionResponse, error) {
	s, id := l.srv, *p.SessionID
	if err := checkSessionID(id); err != nil {
		return nil, err
	}
	s.mu.Lock()
	if l.loading[id] != nil {
		s.mu.Unlock()
		return nil, loadingErr(id)
	}
	sess := s.sessions[id]
	delete(s.sessions, id)
	s.mu.Unlock()
	if sess != nil {
		sess.saving.Lock()
		sess.gone = true
		sess.saving.Unlock()
	}
	if l.keeps() {
		if err := l.store.DeleteSession(id); err != nil {
			return nil, fmt.Errorf("deleting session %s: %w", id, err)
		}
	}
	if sess == nil {
		// Deleting what is not there succeeds, as ACP asks (a delete sent
		// twice, or after another process deleted it, is no error).
		return &deleteSessionResponse{}, nil
	}
	// Answered once the session's turn, if one runs, has answered.
	answer := r.Keep()
	s.afterTurn(sess, sess.stopMCP(), func() { answer.Reply(&deleteSessionResponse{}) })
	return nil, nil
}

// nameSession titles a session after its first prompt and tells the client
// (session_info_update), before the turn's first update.
func (l *loader) nameSession(sess *session, prompt []contentBlock) {
	sess.mu.Lock()
	title := sess.title
	if title == "" {
		title = history.Title(blocksOf(prompt))
		sess.title = title
	} else {
		title = ""
	}
	sess.mu.Unlock()
	if title != "" {
		l.srv.writeUpdate(sess.id, titleUpdate(title))
	}
}

// titleUpdate is the session_info_update that gives a session's title.
func titleUpdate(title string) []byte {
	return jsonrpc.AppendJSON(nil, sessionInfoUpdate{SessionUpdate: "session_info_update", Title: title})
}
