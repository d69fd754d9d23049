package history

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/internal/jsonrpc"
	"github.com/coda-acp/coda/store"
)

// A session's file as acp's loader (load.go) reads and writes it: the
// option values it keeps by name, what is read for a load or resume, what
// other processes appended, the replay, a failed save's warning and
// session/list's cursors.

// Picks are a session's option values; its file keeps them by name, ""
// (the default) not kept.
type Picks struct{ Format, Model, Effort, Mode, Commentary string }

// Kept are the picks by the names the file keeps them under.
func (p Picks) Kept() map[string]string {
	opts := map[string]string{}
	for k, v := range map[string]string{"output_format": p.Format, "model": p.Model, "effort": p.Effort, "mode": p.Mode, "commentary": p.Commentary} {
		if v != "" {
			opts[k] = v
		}
	}
	return opts
}

// PicksOf are the picks a file kept (Kept).
func PicksOf(opts map[string]string) Picks {
	return Picks{Format: opts["output_format"], Model: opts["model"], Effort: opts["effort"], Mode: opts["mode"], Commentary: opts["commentary"]}
}

// Read reads a session's file for load and resume, saying plainly why it
// cannot be used, and returns the history its next turn can use. The
// exchanges are read one at a time, each kept as a live session keeps
// its turns (engine.KeepHistory after each one), their History clipped
// when they were saved. A file that is not
// there is store.ErrNoSession; a corrupt one, -32602 naming the file.
func Read(st *store.Store, id string) (*store.Loaded, []engine.Exchange, error) {
	var kept []engine.Exchange
	l, err := st.LoadSession(id, func(ex *store.Exchange) {
		if kept = append(kept, Of(ex)); len(kept) > engine.MaxHistory {
			kept = engine.KeepHistory(kept) // counting what it cuts, as remember does
		}
	})
	var ce *store.CorruptError
	switch {
	case err == nil:
		return l, engine.KeepHistory(kept), nil
	case errors.Is(err, store.ErrNoSession):
		return nil, nil, err
	case errors.As(err, &ce):
		return nil, nil, fmt.Errorf("%w: session %s cannot be restored: its file %s is corrupt (%s); session/delete removes it", jsonrpc.ErrInvalidParams, id, ce.Path, ce.Reason)
	}
	return nil, nil, fmt.Errorf("reading session %s: %w", id, err)
}

// Refresh is what other coda processes appended to the session's file
// since this one last read it, as the next turn's history.
func Refresh(f *store.Session) ([]engine.Exchange, error) {
	var got []engine.Exchange
	err := f.Refresh(func(ex *store.Exchange) { got = append(got, Of(ex)) })
	return got, err
}

// Replay writes a session's history as session/update objects: each
// prompt as user_message_chunks, then the text its turn streamed
// (streamed.go), then the chunks it closed with, as they were first sent.
// The file is read again, an exchange at a time, so that no more of it is
// held than while it was checked (Read); a file changed since then is
// replayed as far as it can be read. Once ctx is done nothing more is
// written.
func Replay(ctx context.Context, f *store.Session, write func(update []byte)) error {
	b := make([]byte, 0, 4<<10)
	return f.Replay(func(ex *store.Exchange) {
		if ctx.Err() != nil {
			return
		}
		for _, c := range ex.Prompt {
			b = append(b[:0], `{"sessionUpdate":"user_message_chunk","content":`...)
			b = AppendShown(b, c)
			b = append(b, '}')
			write(b)
		}
		for _, u := range ex.Streamed {
			write(u)
		}
		for _, u := range ex.Closing {
			write(u)
		}
	})
}

// SaveWarning is the client's warning of a session that could not be
// saved.
func SaveWarning(id string, err error) string {
	if errors.Is(err, store.ErrSessionFull) {
		return fmt.Sprintf("session %s is full (%v): this turn is not saved, and a restart restores the session without it; start a new session to keep your turns", id, err)
	}
	return fmt.Sprintf("session %s could not be saved (%v): it will not be restored after coda restarts", id, err)
}

// Cursor is session/list's cursor after info: where the page before it
// ended, the last session's time and id, so that a session saved
// meanwhile neither repeats nor hides another.
func Cursor(info *store.SessionInfo) string {
	return base64.RawURLEncoding.EncodeToString([]byte(info.UpdatedAt.UTC().Format(time.RFC3339Nano) + " " + info.ID))
}

// ParseCursor reads a Cursor; one coda did not give is -32602.
func ParseCursor(c string) (*store.SessionInfo, error) {
	bad := fmt.Errorf("%w: cursor: %q is not a cursor coda gave", jsonrpc.ErrInvalidParams, c)
	raw, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return nil, bad
	}
	at, id, ok := strings.Cut(string(raw), " ")
	t, err := time.Parse(time.RFC3339Nano, at)
	if !ok || err != nil {
		return nil, bad
	}
	return &store.SessionInfo{ID: id, UpdatedAt: t}, nil
}
