package jsonrpc

import (
	"encoding/json"
	"sync"
)

// An Order holds messages in wire order behind work off the read loop: by
// key (a session), the messages read while one of the key's requests runs
// off the loop (Open) are held (Hold) and handled after it, in order
// (Drain), off the loop too, until none is left; then the key's messages
// are the loop's again. What a message's key is, and which messages may
// not wait, is the protocol's (acp/order.go). The zero Order holds nothing.
type Order struct {
	mu     sync.Mutex
	queues map[string]*queue
}

type queue struct {
	held  []Held
	bytes int // the params of held, together
}

// A Held is a message as the read loop read it.
type Held struct {
	ID     json.RawMessage // nil for a notification
	Method string
	Params json.RawMessage
	// Names is a key for the request the message is about: its own id's
	// (KeyOf), or for a cancel, the id it names.
	Names string
}

// A key's queue holds at most MaxHeld messages and MaxHeldBytes of their
// params, so that what a client sends while the key's work runs costs what
// coda allows, not what arrives. Past either, Hold refuses.
const (
	MaxHeld      = 1024
	MaxHeldBytes = 64 << 20
)

// Idle reports whether no key's messages are held.
func (o *Order) Idle() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.queues) == 0
}

// Open starts holding key's messages and reports whether it did; false
// when they are held already (the work is one of them, handled by Drain).
func (o *Order) Open(key string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.queues[key] != nil {
		return false
	}
	if o.queues == nil {
		o.queues = map[string]*queue{}
	}
	o.queues[key] = &queue{}
	return true
}

// Find is the key whose held messages include one match reports true of;
// "" when there is none.
func (o *Order) Find(match func(Held) bool) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	for key, q := range o.queues {
		for _, m := range q.held {
			if match(m) {
				return key
			}
		}
	}
	return ""
}

// Hold holds m behind key's work, if key's messages are held, and reports
// whether it did; full says it did not for the bounds (MaxHeld,
// MaxHeldBytes).
func (o *Order) Hold(key string, m Held) (held, full bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	q := o.queues[key]
	switch {
	case q == nil:
		return false, false
	case len(q.held) >= MaxHeld || q.bytes+len(m.Params) > MaxHeldBytes:
		return false, true
	}
	q.held = append(q.held, m)
	q.bytes += len(m.Params)
	return true, false
}

// HoldOnce holds m behind key's work, if key's messages are held, past
// the bounds: a message that must not be lost (a cancel). When done says
// one held already does what m would, m is taken as held and dropped, so
// such messages cost one each, however many arrive.
func (o *Order) HoldOnce(key string, m Held, done func(held []Held) bool) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	q := o.queues[key]
	if q == nil {
		return false
	}
	if !done(q.held) {
		q.held = append(q.held, m)
		q.bytes += len(m.Params)
	}
	return true
}

// Drain handles key's held messages in order, until none is left; then
// key's messages are no longer held. A message stays first in its queue
// until handle returns: one that names it (a cancel of a prompt being
// started) is held behind it, not handled before it.
func (o *Order) Drain(key string, handle func(Held)) {
	for {
		o.mu.Lock()
		q := o.queues[key]
		if len(q.held) == 0 {
			delete(o.queues, key)
			o.mu.Unlock()
			return
		}
		m := q.held[0]
		o.mu.Unlock()
		handle(m)
		o.mu.Lock()
		q.bytes -= len(q.held[0].Params)
		q.held[0] = Held{} // its params are not kept with the queue's array
		q.held = q.held[1:]
		o.mu.Unlock()
	}
}
