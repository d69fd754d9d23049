package acp

import (
	"context"
	"encoding/json"
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
	held []heldMessage
}

// A heldMessage is a message as the read loop read it.
type heldMessage struct {
	id     json.RawMessage // nil for a notification
	method string
	params json.RawMessage
	key    string // the request's id key (idKey), for $/cancel_request
}

// hold queues a message behind its session's request off the loop and
// reports whether it did; a cancel is also handled at once (now). Called
// on the read loop.
func (s *Server) hold(id json.RawMessage, method string, params json.RawMessage) (held, now bool) {
	s.mu.Lock()
	none := len(s.queues) == 0
	s.mu.Unlock()
	if none {
		return false, false
	}
	var named struct {
		SessionID json.RawMessage `json:"sessionId"`
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(params, &named) != nil {
		return false, false // refused as it would be on the loop
	}
	msg := heldMessage{id: id, method: method, params: params}
	if id != nil {
		msg.key = idKeyOf(id)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var q *sessionQueue
	switch {
	case method == "$/cancel_request":
		key, ok := idKey(named.RequestID)
		if !ok {
			return false, false
		}
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
		return false, false
	}
	q.held = append(q.held, msg)
	return true, method == "session/cancel"
}

// sessionAside runs work, which reads files a client named, off the read
// loop and answers r with what it returns, as aside does; the session's
// messages read meanwhile wait for it (hold) and are handled after the
// answer, in order. A request already off the loop (handled from a
// session's queue) runs work where it is.
func sessionAside[R any](s *Server, r *request[R], sessionID string, work func(ctx context.Context) (*R, error)) (*R, error) {
	if r.ctx != nil {
		return work(r.ctx)
	}
	s.mu.Lock()
	s.queues[sessionID] = &sessionQueue{}
	s.mu.Unlock()
	return asideThen(s, r, nil, work, func(ctx context.Context) { s.unhold(ctx, sessionID) })
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
		s.dispatch(ctx, m.id, m.method, m.params)
		s.mu.Lock()
		q.held[0] = heldMessage{} // its params are not kept with the queue's array
		q.held = q.held[1:]
		s.mu.Unlock()
	}
}
