package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

// keepsSessions reports whether sessions outlive coda: they need a state
// directory.
func (s *Server) keepsSessions() bool { return s.store != nil }

// sessionCapabilities are initialize's agentCapabilities.sessionCapabilities.
func (s *Server) sessionCapabilities() sessionCapabilities {
	served := &struct{}{}
	caps := sessionCapabilities{Close: served, AdditionalDirectories: served}
	if s.keepsSessions() {
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
func (s *Server) saveSession(sess *session, ex *statestore.Exchange) string {
	if !s.keepsSessions() {
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
		sess.file, err = s.store.CreateSession(state)
	case ex == nil:
		err = sess.file.Save(state)
	default:
		err = sess.file.Append(state, ex)
	}
	if err != nil {
		return s.saveFailed(sess, err)
	}
	return ""
}

func (s *Server) saveFailed(sess *session, err error) string {
	w := fmt.Sprintf("session %s could not be saved (%v): it will not be restored after coda restarts", sess.id, err)
	if errors.Is(err, statestore.ErrSessionFull) {
		w = fmt.Sprintf("session %s is full (%v): this turn is not saved, and a restart restores the session without it; start a new session to keep your turns", sess.id, err)
	}
	s.log.Warn(w)
	return w
}

// saveTurn records a finished turn in the session's file: the prompt as the
// user sent it, the exchange the next turns see, the text it streamed
// (streamed.go) and the closing chunks as they were sent. A cancelled turn
// leaves no exchange, as it leaves none in the session's history. gone
// marks a turn that ran on after its client went away (DESIGN §21). It
// returns a warning when the file could not be written.
func (s *Server) saveTurn(sess *session, prompt []contentBlock, runID string, ex engine.Exchange, streamed []json.RawMessage, closing [][]byte, status string, gone bool) string {
	if status == engine.StatusCancelled {
		return s.saveSession(sess, nil)
	}
	stored := history.Exchange(blocksOf(prompt), runID, ex, streamed, closing)
	stored.ClientGone = gone
	return s.saveSession(sess, stored)
}

// catchUp takes into the session's history the turns other coda processes
// appended to its file since this one last read it (two editor windows on
// one session): a live session's next turn sees every exchange its file
// holds, in the order they were written. turn gets the history anew when
// there were any.
func (s *Server) catchUp(sess *session, turn *engine.Turn) {
	if sess.file == nil {
		return
	}
	var got []engine.Exchange
	if err := sess.file.Refresh(func(ex *statestore.Exchange) { got = append(got, history.Of(ex)) }); err != nil {
		s.log.Warn("reading what other coda processes added to a session", "session", sess.id, "err", err)
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
func (s *Server) loadSession(ctx context.Context, r *request[loadSessionResponse], p *loadSessionRequest) (*loadSessionResponse, error) {
	ld, err := s.beginRestore(r.Method(), p)
	if err != nil {
		return nil, err
	}
	return aside(ctx, r, ld.end, func(ctx context.Context) (*loadSessionResponse, error) {
		sess, res, err := s.restoreSession(ctx, ld, p, true)
		if err != nil {
			return nil, err
		}
		s.announce(sess, res.Meta)()
		return res, nil
	})
}

// resumeSession handles session/resume: the session is restored from its
// file, without a replay; its commands and title come before the
// response, as a load's do. It runs off the read loop, as a load does.
func (s *Server) resumeSession(ctx context.Context, r *request[resumeSessionResponse], p *resumeSessionRequest) (*resumeSessionResponse, error) {
	ld, err := s.beginRestore(r.Method(), p)
	if err != nil {
		return nil, err
	}
	return aside(ctx, r, ld.end, func(ctx context.Context) (*resumeSessionResponse, error) {
		sess, res, err := s.restoreSession(ctx, ld, p, false)
		if err != nil {
			return nil, err
		}
		s.announce(sess, res.Meta)()
		return (*resumeSessionResponse)(res), nil
	})
}

// A restore is a load or resume between its checks, on the read loop, and
// its answer: the session it restores is being loaded meanwhile.
type restore struct {
	s          *Server
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
func (s *Server) beginRestore(method string, p *loadSessionRequest) (*restore, error) {
	id := *p.SessionID
	cwd, commentary, err := s.checkRestore(p)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.loading[id] != nil {
		return nil, loadingErr(id)
	}
	old := s.sessions[id]
	if old != nil {
		old.mu.Lock()
		busy := old.running != nil
		old.mu.Unlock()
		if busy {
			return nil, fmt.Errorf("%w: session %s is answering a prompt: wait for its response (or cancel it), then %s it", ErrInvalidParams, id, method)
		}
	}
	ld := &restore{s: s, method: method, id: id, cwd: cwd, commentary: commentary, old: old}
	s.loading[id] = ld
	return ld, nil
}

// checkRestore checks the params a load, a resume and a fork share: the
// session's id, its directories (the cwd cleaned) and its commentary, with
// sessions kept.
func (s *Server) checkRestore(p *loadSessionRequest) (cwd, commentary string, err error) {
	if err := checkSessionID(*p.SessionID); err != nil {
		return "", "", err
	}
	if cwd, err = checkDirs(*p.Cwd, p.AdditionalDirectories); err != nil {
		return "", "", err
	}
	if commentary, err = p.Meta.commentary(); err != nil {
		return "", "", err
	}
	if !s.keepsSessions() {
		return "", "", fmt.Errorf("%w: coda runs without a state directory, so it keeps no sessions", ErrInvalidParams)
	}
	return cwd, commentary, nil
}

// end says the session is no longer being loaded; once the restore has
// put it among the open sessions, or failed.
func (ld *restore) end() {
	ld.s.mu.Lock()
	ld.done()
	ld.s.mu.Unlock()
}

// done is end under the server's lock; a later load of the session, begun
// since, is its own.
func (ld *restore) done() {
	if ld.s.loading[ld.id] == ld {
		delete(ld.s.loading, ld.id)
	}
}

// restoreSession restores a session from its file for a load or resume,
// off the read loop, and says what to answer; with replay, its history is
// sent first.
func (s *Server) restoreSession(ctx context.Context, ld *restore, p *loadSessionRequest, replay bool) (*session, *loadSessionResponse, error) {
	id, cwd, commentary, old := ld.id, ld.cwd, ld.commentary, ld.old
	s.startListing() // asked while the file is read; awaited before the answer
	l, history, err := s.readSession(id)
	if err != nil {
		return nil, nil, err
	}
	f := &l.State
	sess, err := s.restore(l, history, cwd, p.AdditionalDirectories)
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
		s.replay(ctx, sess)
	}
	// The answer's model option has the providers' list, so that nothing
	// follows the answer for the session (listed.go); waited for while the
	// session is still being loaded.
	s.awaitListed(ctx, maxListWait)
	s.mu.Lock()
	s.sessions[id] = sess
	ld.done() // a prompt sent on reading the answer finds the session
	s.mu.Unlock()
	warnings := l.Warnings
	if changed || cwd != f.Cwd || !slices.Equal(p.AdditionalDirectories, f.AdditionalDirectories) {
		if w := s.saveSession(sess, nil); w != "" {
			warnings = append(warnings, w)
		}
	}
	return sess, s.sessionResponse(sess, warnings...), nil
}

// readSession reads a session's file for load and resume, saying plainly
// why it cannot be used, and returns the history its next turn can use.
// The exchanges are read one at a time, each kept as a live session keeps
// its turns (engine.KeepHistory after each one), their History clipped
// when they were saved.
func (s *Server) readSession(id string) (*statestore.Loaded, []engine.Exchange, error) {
	var kept []engine.Exchange
	l, err := s.store.LoadSession(id, func(ex *statestore.Exchange) {
		if kept = append(kept, history.Of(ex)); len(kept) > engine.MaxHistory {
			kept = engine.KeepHistory(kept) // counting what it cuts, as remember does
		}
	})
	var ce *statestore.CorruptError
	switch {
	case err == nil:
		for _, w := range l.Warnings {
			s.log.Warn("loading a session: "+w, "session", id)
		}
		return l, engine.KeepHistory(kept), nil
	case errors.Is(err, statestore.ErrNoSession):
		return nil, nil, fmt.Errorf("%w: unknown session %q", ErrNotFound, id)
	case errors.As(err, &ce):
		s.log.Warn("a session's file is corrupt", "session", id, "file", ce.Path, "err", err)
		return nil, nil, fmt.Errorf("%w: session %s cannot be restored: its file %s is corrupt (%s); session/delete removes it", ErrInvalidParams, id, ce.Path, ce.Reason)
	}
	return nil, nil, fmt.Errorf("reading session %s: %w", id, err)
}

// restore makes a session of its file, in cwd: its output levels and
// options as they were, and the history its next turn can use.
func (s *Server) restore(l *statestore.Loaded, history []engine.Exchange, cwd string, additional []string) (*session, error) {
	f := &l.State
	sess := &session{
		id: f.ID, cwd: cwd, additional: additional, metaRaw: f.Output,
		title: f.Title, createdAt: f.CreatedAt, toolSupport: engine.NewToolSupport(), file: l.Session, private: taint.NewIndex(),
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
		if sess.meta, err = s.out.metaLevel(f.Output, cwd); err != nil {
			return nil, fmt.Errorf("session %s cannot be restored: its output spec: %w", f.ID, err)
		}
	}
	if sess.outputs, err = s.out.sessionOutputs(sess.meta, sess.config); err != nil {
		return nil, fmt.Errorf("session %s cannot be restored: %w", f.ID, err)
	}
	sess.history = history
	s.workspace(sess)
	return sess, nil
}

// workspace gives a session its workspace: the editor's, in the session's
// directories, its permission requests answered by the session's mode.
func (s *Server) workspace(sess *session) {
	caps := s.caps.get()
	sess.ws = editor.New(editor.Options{Conn: s.conn, SessionID: sess.id, Cwd: sess.cwd, Additional: sess.additional, ClientCaps: caps, Timeout: s.opts.EditorTimeout, ToolCall: toolCallObject})
	bindMode(sess)
}

// replay sends a session's history: each prompt as user_message_chunks,
// then the text its turn streamed (streamed.go), then the chunks it closed
// with, as they were first sent. The file
// is read again, an exchange at a time, so that no more of it is held than
// while it was checked (readSession); a file changed since then is replayed
// as far as it can be read.
func (s *Server) replay(ctx context.Context, sess *session) {
	id := sess.id
	b := make([]byte, 0, 4<<10)
	err := sess.file.Replay(func(ex *statestore.Exchange) {
		if ctx.Err() != nil {
			return // coda is shutting down: the load's answer says so
		}
		for _, c := range ex.Prompt {
			b = append(b[:0], `{"sessionUpdate":"user_message_chunk","content":`...)
			b = history.AppendShown(b, c)
			b = append(b, '}')
			s.writeUpdate(id, b)
		}
		for _, u := range ex.Streamed {
			s.writeUpdate(id, u)
		}
		for _, u := range ex.Closing {
			s.writeUpdate(id, u)
		}
	})
	if err != nil {
		s.log.Warn("replaying a session: its file changed since it was read", "session", id, "err", err)
	}
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
func (s *Server) deleteSession(ctx context.Context, r *request[deleteSessionResponse], p *deleteSessionRequest) (*deleteSessionResponse, error) {
	id := *p.SessionID
	if err := checkSessionID(id); err != nil {
		return nil, err
	}
	s.mu.Lock()
	if s.loading[id] != nil {
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
	if s.keepsSessions() {
		if err := s.store.DeleteSession(id); err != nil {
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
func (s *Server) nameSession(sess *session, prompt []contentBlock) {
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
		s.writeUpdate(sess.id, titleUpdate(title))
	}
}

// titleUpdate is the session_info_update that gives a session's title.
func titleUpdate(title string) []byte {
	return jsonrpc.AppendJSON(nil, sessionInfoUpdate{SessionUpdate: "session_info_update", Title: title})
}
