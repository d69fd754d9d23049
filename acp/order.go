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
// queued, and handled in wire order once it has answered, off the loop
// too, until the queue is empty: then the session's messages are the read
// loop's again. A request naming a session is known by its params'
// sessionId; $/cancel_request by the request it names.
//
// session/cancel (and $/cancel_request for a turn already running) is
// never held: it cancels the session's running turn at once, as on the
// loop, and is queued as well, so that a prompt queued before it is
// cancelled too once it starts.

// A sessionQueue holds the messages read for a session while one of its
// requests runs off the read loop.
type sessionQueue struct {
	held  []heldMessage
	bytes int // the params of held, together
}

// A session's queue holds at most maxHeld messages and maxHeldBytes of
// their params, so that what a client sends while a file it named is
// read costs what coda allows, not what arrives. Past either, a request
// is refused at once, saying why (errQueueFull); a cancel is always held,
// but one in a row, and a $/cancel_request once for the prompt it names.
const (
	maxHeld      = 1024
	maxHeldBytes = 64 << 20
)

// errQueueFull refuses a request past a session's queue's bounds.
var errQueueFull = errors.New("session is busy reading a file a client named, with too many messages queued behind it: send this again once it has answered")

// A heldMessage is a message as the read loop read it.
type heldMessage struct {
	id     json.RawMessage // nil for a notification
	method string
	params json.RawMessage
	key    string // the request's id key (idKey); a $/cancel_request's, the one it names
}

// hold queues a message behind its session's request off the loop and
// reports whether it did; a cancel is also handled at once (now). A
// request past the queue's bounds is not held: refused says why. Called
// on the read loop.
func (s *Server) hold(id json.RawMessage, method string, params json.RawMessage) (held, now bool, refused error) {
	s.mu.Lock()
	none := len(s.queues) == 0
	s.mu.Unlock()
	if none {
		return false, false, nil
	}
	var named struct {
		SessionID json.RawMessage `json:"sessionId"`
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(params, &named) != nil {
		return false, false, nil // refused as it would be on the loop
	}
	msg := heldMessage{id: id, method: method, params: params}
	if id != nil {
		msg.key = jsonrpc.KeyOf(id)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var q *sessionQueue
	switch {
	case method == "$/cancel_request":
		key, ok := jsonrpc.IDKey(named.RequestID)
		if !ok {
			return false, false, nil
		}
		msg.key = key // for a $/cancel_request, the request it names
		for _, queue := range s.queues {
			for _, m := range queue.held {
				if m.key == key && m.method == "session/prompt" {
					q = queue
				}
			}
		}
	default:
		var sessionID string
		if json.Unmarshal(named.SessionID, &sessionID) == nil {
			q = s.queues[sessionID]
		}
	}
	if q == nil {
		return false, false, nil
	}
	cancel := method == "session/cancel" || method == "$/cancel_request"
	switch {
	case method == "session/cancel" && len(q.held) > 0 && q.held[len(q.held)-1].method == method,
		method == "$/cancel_request" && slices.ContainsFunc(q.held, func(m heldMessage) bool { return m.method == method && m.key == msg.key }):
		// A cancel held already does what this one would: the session's,
		// as the last message; or one for the same request.
	case !cancel && (len(q.held) >= maxHeld || q.bytes+len(params) > maxHeldBytes):
		if id == nil {
			s.log.Warn("dropping a notification: its session's queue is full", "method", method)
			return true, false, nil
		}
		return false, false, fmt.Errorf("%s: %w", method, errQueueFull)
	default:
		q.held = append(q.held, msg)
		q.bytes += len(params)
	}
	return true, method == "session/cancel", nil
}

// sessionAside runs work, which reads files a client named, off the read
// loop and answers r with what it returns, as aside does; the session's
// messages read meanwhile wait for it (hold) and are handled after the
// answer, in order. A request handled from its session's queue is one of
// those messages: it runs where it is (its lane is Held), and the queue
// goes on after it.
func sessionAside[R any](ctx context.Context, s *Server, r *request[R], sessionID string, work func(ctx context.Context) (*R, error)) (*R, error) {
	s.mu.Lock()
	_, queued := s.queues[sessionID]
	if !queued {
		s.queues[sessionID] = &sessionQueue{}
	}
	s.mu.Unlock()
	if queued {
		return jsonrpc.Aside(ctx, r, nil, work, nil)
	}
	return jsonrpc.Aside(ctx, r, nil, work, func(ctx context.Context) { s.unhold(ctx, sessionID) })
}

// unhold handles the session's queued messages in order, off the loop,
// until none is left; then the session's messages are the read loop's
// again. A message stays first in the queue until it is handled: a
// $/cancel_request for a prompt being started is queued behind it (hold),
// not handled on the loop before the prompt is registered, which would
// miss it.
func (s *Server) unhold(ctx context.Context, sessionID string) {
	for {
		s.mu.Lock()
		q := s.queues[sessionID]
		if len(q.held) == 0 {
			delete(s.queues, sessionID)
			s.mu.Unlock()
			return
		}
		m := q.held[0]
		s.mu.Unlock()
		methods.Dispatch(ctx, s.conn.Held(), s, m.id, m.method, m.params)
		s.mu.Lock()
		q.bytes -= len(q.held[0].params)
		q.held[0] = heldMessage{} // its params are not kept with the queue's array
		q.held = q.held[1:]
		s.mu.Unlock()
	}
}
