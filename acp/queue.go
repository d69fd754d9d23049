package acp

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/coda-acp/coda/internal/jsonrpc"
)

// Prompts sent while a turn runs (DESIGN §22). A session/prompt that finds
// its session answering is not refused: it is queued, and answered after
// the turns before it, in order, each with its own response. One sent to
// steer (_meta.coda.steer: true) joins the running turn instead: the model
// reads it at its next call (engine.Turn.Steer), and its response comes
// when that turn ends, with the turn's stop reason. A steering prompt the
// turn ended before reading is queued as an ordinary prompt, so it is
// never lost. session/cancel cancels the running turn, its steering
// prompts and the whole queue; $/cancel_request one queued prompt.
//
// A queued prompt owes its answer from the moment it is read
// (conn.begin), so coda never exits with it unanswered.

// A session's queue holds at most maxQueued prompts and maxQueuedBytes of
// their content: what a client sends while a turn runs costs what coda
// allows, not what arrives. Past either a prompt is refused at once,
// saying why.
const (
	maxQueued      = 64
	maxQueuedBytes = 64 << 20
)

// errPromptQueueFull refuses a prompt past its session's queue's bounds.
var errPromptQueueFull = errors.New("too many prompts are waiting for this session's running turn: send this again once one has answered, or send session/cancel")

// promptQueue holds the prompts a server owes an answer beyond the read
// loop's: each running or queued prompt by its request id (for
// $/cancel_request), and each session's queue, started in order as its
// turns end. It runs a prompt as the server does (Server.prompt) and
// tells the connection what it no longer owes.
type promptQueue struct {
	s  *Server
	mu sync.Mutex
	// byID is a running or queued prompt's request id (idKey) → its
	// session.
	byID map[string]*session
}

func newPromptQueue(s *Server) *promptQueue {
	return &promptQueue{s: s, byID: map[string]*session{}}
}

// add notes that the prompt with request id key runs or waits in sess.
func (pq *promptQueue) add(key string, sess *session) {
	pq.mu.Lock()
	pq.byID[key] = sess
	pq.mu.Unlock()
}

// forget notes that the prompt with request id key is answered.
func (pq *promptQueue) forget(key string) {
	pq.mu.Lock()
	delete(pq.byID, key)
	pq.mu.Unlock()
}

// sessionOf is the session of the running or queued prompt with request
// id key; nil when none is.
func (pq *promptQueue) sessionOf(key string) *session {
	pq.mu.Lock()
	defer pq.mu.Unlock()
	return pq.byID[key]
}

// A queuedPrompt is a prompt read while its session's turn ran.
type queuedPrompt struct {
	p      *promptRequest
	id     []byte // the request's id, as the client sent it
	key    string // its id key (idKey), for $/cancel_request
	ctx    context.Context
	cancel context.CancelFunc
	answer answer[promptResponse]
	bytes  int
	// text is a steering prompt's, as the model reads it.
	text string
}

// promptBytes is what a prompt's content weighs in a queue.
func promptBytes(blocks []contentBlock) int {
	n := 0
	for _, c := range blocks {
		n += len(c.Text) + len(c.Data) + len(c.URI)
		if c.Resource != nil && c.Resource.Text != nil {
			n += len(*c.Resource.Text)
		}
	}
	return n
}

// steerBox holds a running turn's steering prompts: pending until the
// model reads them (take), then taken until the turn ends.
type steerBox struct {
	mu        sync.Mutex
	pending   []*queuedPrompt
	taken     []*queuedPrompt
	closed    bool
	cancelled bool
}

// take is the turn's engine.Turn.Steer.
func (b *steerBox) take() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var texts []string
	for _, q := range b.pending {
		texts = append(texts, q.text)
	}
	b.taken = append(b.taken, b.pending...)
	b.pending = nil
	return texts
}

// add puts a steering prompt in the box and reports whether it could: a
// box whose turn has ended takes none.
func (b *steerBox) add(q *queuedPrompt) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return false
	}
	b.pending = append(b.pending, q)
	return true
}

// close ends the box with its turn: what the model read, and what it did
// not, which is queued.
func (b *steerBox) close() (taken, pending []*queuedPrompt, cancelled bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	return b.taken, b.pending, b.cancelled
}

func (b *steerBox) cancel() {
	b.mu.Lock()
	b.cancelled = true
	b.mu.Unlock()
}

// queue queues p behind its session's running turn, or joins that
// turn when p steers. Called where prompt would start a turn, with the
// session busy.
func (pq *promptQueue) queue(r *request[promptResponse], sess *session, p *promptRequest) (*promptResponse, error) {
	s := pq.s
	size := promptBytes(p.Prompt)
	steer := p.Meta.steer()
	var text string
	if steer {
		var err error
		if text, err = renderPrompt(p.Prompt); err != nil {
			return nil, err
		}
	}
	sess.mu.Lock()
	full := len(sess.queue) >= maxQueued || sess.queueBytes+size > maxQueuedBytes
	sess.mu.Unlock()
	if full {
		return nil, fmt.Errorf("%w: session %s: %w", ErrInvalidParams, sess.id, errPromptQueueFull)
	}
	ctx, cancel, err := r.Begin()
	if err != nil {
		return nil, err
	}
	q := &queuedPrompt{p: p, id: r.ID(), key: jsonrpc.KeyOf(r.ID()), ctx: ctx, cancel: cancel, answer: r.Keep(), bytes: size, text: text}
	pq.add(q.key, sess)
	sess.mu.Lock()
	if steer && sess.running != nil && sess.running.steer != nil && sess.running.steer.add(q) {
		sess.mu.Unlock()
		s.log.Info("a prompt steers the running turn", "session", sess.id)
		return nil, nil
	}
	sess.queue = append(sess.queue, q)
	sess.queueBytes += size
	idle := sess.running == nil && !sess.starting
	sess.mu.Unlock()
	s.log.Info("a prompt waits for the running turn", "session", sess.id, "queued", len(sess.queue))
	if idle {
		// The turn it waited for ended meanwhile.
		pq.next(sess)
	}
	return nil, nil
}

// next starts the first prompt of the session's queue, when no turn runs.
// Called once a turn has answered.
func (pq *promptQueue) next(sess *session) {
	sess.mu.Lock()
	if sess.running != nil || sess.starting || len(sess.queue) == 0 {
		sess.mu.Unlock()
		return
	}
	q := sess.queue[0]
	sess.queue = sess.queue[1:]
	sess.queueBytes -= q.bytes
	sess.starting = true
	sess.mu.Unlock()
	go pq.start(sess, q)
}

// start handles a queued prompt as prompt would have, had its
// session been free: under the context its queueing began.
func (pq *promptQueue) start(sess *session, q *queuedPrompt) {
	s := pq.s
	defer s.conn.End() // the queue's; a turn owes its own
	defer q.cancel()
	// Its lane is Held: the queue's own work holds the connection open, so a
	// prompt read before stdin ended still starts, as the loop would have.
	r := jsonrpc.NewRequest[promptResponse](s.conn.Held(), "session/prompt", q.id)
	if q.ctx.Err() != nil {
		sess.mu.Lock()
		sess.starting = false
		sess.mu.Unlock()
		pq.cancel(sess, q)
		pq.next(sess)
		return
	}
	res, err := s.startDequeued(r, q.p)
	if r.Kept() {
		// A turn runs, and answers it; it cleared starting.
		return
	}
	sess.mu.Lock()
	sess.starting = false
	sess.mu.Unlock()
	pq.forget(q.key)
	if err != nil {
		q.answer.Fail(err)
	} else {
		q.answer.Reply(res)
	}
	pq.next(sess)
}

// cancel answers a queued prompt that never ran "cancelled".
func (pq *promptQueue) cancel(sess *session, q *queuedPrompt) {
	pq.forget(q.key)
	q.answer.Reply(&promptResponse{StopReason: "cancelled", Meta: codaMeta[promptOutcome]{Coda: promptOutcome{Status: "cancelled", Warnings: []string{}}}})
}

// drop takes every prompt out of the session's queue, and the
// running turn's steering prompts, and answers each "cancelled"
// (session/cancel).
func (pq *promptQueue) drop(sess *session) {
	s := pq.s
	sess.mu.Lock()
	queue := sess.queue
	sess.queue, sess.queueBytes = nil, 0
	if sess.running != nil && sess.running.steer != nil {
		sess.running.steer.cancel()
	}
	sess.mu.Unlock()
	for _, q := range queue {
		q.cancel()
		pq.cancel(sess, q)
		s.conn.End()
	}
}

// dropID answers the queued prompt with the request key "cancelled"
// and reports whether it found one ($/cancel_request).
func (pq *promptQueue) dropID(sess *session, key string) bool {
	s := pq.s
	sess.mu.Lock()
	for i, q := range sess.queue {
		if q.key == key {
			sess.queue = append(sess.queue[:i:i], sess.queue[i+1:]...)
			sess.queueBytes -= q.bytes
			sess.mu.Unlock()
			q.cancel()
			pq.cancel(sess, q)
			s.conn.End()
			return true
		}
	}
	sess.mu.Unlock()
	return false
}

// steered answers a turn's steering prompts once it has ended: those the
// model read with the turn's stop reason; those it did not are queued
// first, unless the turn was cancelled, which cancels them too.
func (pq *promptQueue) steered(sess *session, b *steerBox, runID, stop string) {
	s := pq.s
	taken, pending, cancelled := b.close()
	for _, q := range taken {
		pq.forget(q.key)
		q.answer.Reply(&promptResponse{StopReason: stop, Meta: codaMeta[promptOutcome]{Coda: promptOutcome{Status: "steered", RunID: runID, Warnings: []string{}}}})
		q.cancel()
		s.conn.End()
	}
	if cancelled {
		for _, q := range pending {
			q.cancel()
			pq.cancel(sess, q)
			s.conn.End()
		}
		return
	}
	if len(pending) == 0 {
		return
	}
	sess.mu.Lock()
	for _, q := range pending {
		q.text = ""
		sess.queueBytes += q.bytes
	}
	sess.queue = append(pending, sess.queue...)
	sess.mu.Unlock()
}
