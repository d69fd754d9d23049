package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/coda-acp/coda/internal/jsonrpc"
)

// A session's messages in wire order, when one of them runs off the read
// loop. A request that reads files the client names (a script: model, a
// schema or validator a format change recompiles: readsFiles) runs off the
// loop (sessionAside), so that a file system that hangs holds up no other
// session; the messages that name its session and are read meanwhile are
// held (jsonrpc.Order, by session id), and handled in wire order once it
// has answered, off the loop too, until none is left: then the session's
// messages are the read loop's again. A request naming a session is known
// by its params' sessionId; $/cancel_request by the request it names.
//
// session/cancel (and $/cancel_request for a turn already running) is
// never held up: it cancels the session's running turn at once, as on the
// loop, and is held as well, so that a prompt held before it is cancelled
// too once it starts. A request past the order's bounds is refused at
// once, saying why (errQueueFull); a cancel is always held, but one in a
// row, and a $/cancel_request once for the prompt it names.

// errQueueFull refuses a request past a session's queue's bounds.
var errQueueFull = errors.New("session is busy reading a file a client named, with too many messages queued behind it: send this again once it has answered")

// hold queues a message behind its session's request off the loop and
// reports whether it did; a cancel is also handled at once (now). A
// request past the queue's bounds is not held: refused says why. Called
// on the read loop.
func (s *Server) hold(id json.RawMessage, method string, params json.RawMessage) (held, now bool, refused error) {
	if s.order.Idle() {
		return false, false, nil
	}
	var named struct {
		SessionID json.RawMessage `json:"sessionId"`
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(params, &named) != nil {
		return false, false, nil // refused as it would be on the loop
	}
	msg := jsonrpc.Held{ID: id, Method: method, Params: params}
	if id != nil {
		msg.Names = jsonrpc.KeyOf(id)
	}
	var sessionID string
	switch method {
	case "$/cancel_request":
		key, ok := jsonrpc.IDKey(named.RequestID)
		if !ok {
			return false, false, nil
		}
		msg.Names = key // for a $/cancel_request, the request it names
		sessionID = s.order.Find(func(m jsonrpc.Held) bool { return m.Names == key && m.Method == "session/prompt" })
		held = s.order.HoldOnce(sessionID, msg, func(q []jsonrpc.Held) bool {
			return slices.ContainsFunc(q, func(m jsonrpc.Held) bool { return m.Method == method && m.Names == key })
		})
		return held, false, nil
	case "session/cancel":
		// Held once, as the last message: one held already does what
		// this one would.
		if json.Unmarshal(named.SessionID, &sessionID) != nil {
			return false, false, nil
		}
		held = s.order.HoldOnce(sessionID, msg, func(q []jsonrpc.Held) bool { return len(q) > 0 && q[len(q)-1].Method == method })
		return held, held, nil
	}
	if json.Unmarshal(named.SessionID, &sessionID) != nil {
		return false, false, nil
	}
	held, full := s.order.Hold(sessionID, msg)
	switch {
	case full && id == nil:
		s.log.Warn("dropping a notification: its session's queue is full", "method", method)
		return true, false, nil
	case full:
		return false, false, fmt.Errorf("%s: %w", method, errQueueFull)
	}
	return held, false, nil
}

// sessionAside runs work, which reads files a client named, off the read
// loop and answers r with what it returns, as aside does; the session's
// messages read meanwhile wait for it (hold) and are handled after the
// answer, in order. A request handled from its session's held messages is
// one of them: it runs where it is (its lane is Held), and they go on
// after it.
func sessionAside[R any](ctx context.Context, s *Server, r *request[R], sessionID string, work func(ctx context.Context) (*R, error)) (*R, error) {
	if !s.order.Open(sessionID) {
		return jsonrpc.Aside(ctx, r, nil, work, nil)
	}
	return jsonrpc.Aside(ctx, r, nil, work, func(ctx context.Context) { s.unhold(ctx, sessionID) })
}

// unhold handles the session's held messages in order, off the loop,
// until none is left; then the session's messages are the read loop's
// again.
func (s *Server) unhold(ctx context.Context, sessionID string) {
	s.order.Drain(sessionID, func(m jsonrpc.Held) {
		methods.Dispatch(ctx, s.conn.Held(), s, m.ID, m.Method, m.Params)
	})
}
