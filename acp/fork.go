package acp

import (
	"context"
	"errors"
	"fmt"
	"time"

	statestore "github.com/coda-acp/coda/store"
)

// session/fork (ACP's UNSTABLE schema; DESIGN §22): a new session with the
// source's history up to its last finished exchange — what its file holds
// — and its options, output spec and taint, in its own file; the source is
// only read, and may be answering meanwhile. The fork is restored from its
// new file as session/resume restores a session, so list, load and delete
// treat it as any session. Served where sessions are kept.

// forkSessionRequest is session/fork's params: load's, the session being
// the one to fork.
type forkSessionRequest = loadSessionRequest

// forkSessionResponse is what session/fork answers: the new session, as
// session/new would.
type forkSessionResponse struct {
	Meta          *warningsMeta  `json:"_meta,omitempty"`
	ConfigOptions []configOption `json:"configOptions"`
	Modes         modeState      `json:"modes"`
	SessionID     string         `json:"sessionId"`
}

func (l *loader) forkSession(ctx context.Context, r *request[forkSessionResponse], p *forkSessionRequest) (*forkSessionResponse, error) {
	s, from := l.srv, *p.SessionID
	cwd, commentary, err := l.checkRestore(p)
	if err != nil {
		return nil, err
	}
	id := s.opts.Engine.NewID("s")
	ld := &restore{l: l, method: r.Method(), id: id, cwd: cwd, commentary: commentary}
	s.mu.Lock()
	if l.loading[from] != nil {
		s.mu.Unlock()
		return nil, loadingErr(from)
	}
	l.loading[id] = ld
	s.mu.Unlock()
	return aside(ctx, r, ld.end, func(ctx context.Context) (*forkSessionResponse, error) {
		_, n, err := l.store.ForkSession(from, func(st statestore.SessionState) statestore.SessionState {
			st.ID, st.Cwd, st.AdditionalDirectories, st.CreatedAt = id, cwd, p.AdditionalDirectories, time.Now().UTC()
			return st
		})
		var ce *statestore.CorruptError
		switch {
		case errors.Is(err, statestore.ErrNoSession):
			return nil, fmt.Errorf("%w: unknown session %q", ErrNotFound, from)
		case errors.As(err, &ce):
			return nil, fmt.Errorf("%w: session %s cannot be forked: its file %s is corrupt (%s)", ErrInvalidParams, from, ce.Path, ce.Reason)
		case err != nil:
			return nil, fmt.Errorf("forking session %s: %w", from, err)
		}
		l.log.Info("session forked", "session", from, "fork", id, "exchanges", n)
		sess, res, err := l.restoreSession(ctx, ld, &loadSessionRequest{SessionID: &id, Cwd: &cwd, AdditionalDirectories: p.AdditionalDirectories, MCPServers: p.MCPServers, Meta: p.Meta}, false)
		if err != nil {
			return nil, err
		}
		s.announce(sess, res.Meta)()
		return &forkSessionResponse{Meta: res.Meta, ConfigOptions: res.ConfigOptions, Modes: res.Modes, SessionID: id}, nil
	})
}
