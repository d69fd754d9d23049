package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"
)

// Serve serves one ACP connection on in and out. It returns when the
// connection is over (in ended, or ctx is done because coda was signalled)
// and every prompt read has been answered and the output flushed; the error
// is the output's, if writing failed. A Server serves one connection.
//
// When ctx ends first, in may still be open: reading it goes on in the
// background until it ends, but nothing read is answered any more.
func (s *Server) Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	s.conn = newConn(s.opts, in, out)
	err := s.conn.serve(ctx, s.serve)
	// 7. Stop the sessions' MCP servers: every turn that could call them
	// has answered; and the providers' listing, if it still runs.
	s.mcp.Close()
	s.pick.Listing.Stop()
	// 8. The index's lines of the last turns' appends are written.
	s.store.Flush()
	return err
}

// A conn is the whole JSON-RPC connection: its life, its read loop, and the
// calls coda makes to the editor. Its life, in the order it happens:
//
//  1. serve: the read loop reads the messages and hands each request and
//     notification to the method table (methods.go), in wire order, and
//     each answer to the call that waits for it, until stdin ends, ctx
//     is done (coda was signalled) or a write to stdout fails (the client
//     is gone);
//  2. disconnect: no new turn starts, nothing more read is handled, and
//     coda's calls to the editor (permission, fs/*, terminal/*) that are
//     waiting fail at once, as new ones do: no answer can come any more.
//     After a signal the turns are cancelled first (step 4 comes early), so
//     none takes the disconnect for an editor gone away and carries on;
//  3. drain: when stdin ended, the turns still running get DrainTimeout to
//     finish; after a signal, none; when the client is gone (a write to
//     stdout failed, DESIGN §21), as long as they take: nobody waits for
//     coda to end, and their answers are recorded for session/load;
//  4. cancel: the turns still running are cancelled; each answers its
//     prompt "cancelled" and finishes its run record;
//  5. wait: until every answer owed is written (each prompt's, and each
//     session/close's that waits for its session's turn);
//  6. flush and close the output;
//  7. stop the sessions' MCP servers and the providers' model listing
//     (Serve returns once they are gone).
//
// Turns run under the connection's own context, turns, which only step 4
// cancels.
//
// coda owns this whole layer rather than leaving the read loop and its
// calls to a JSON-RPC library (ARCHITECTURE.md says why): the line reader
// (stream.go) already decodes each message's envelope, so the read loop
// hands on what it decoded; a request's id is kept as the client spelt it,
// so a negative or string id is echoed exactly; and a message without an id
// is a notification, never answered.
type conn struct {
	log          *slog.Logger
	in           *stream
	out          *output
	drainTimeout time.Duration

	turns       context.Context
	cancelTurns context.CancelFunc

	mu      sync.Mutex
	closing bool           // set at step 2: no new turn starts, nothing read is handled
	owed    sync.WaitGroup // answers the read loop left to goroutines

	// calls are coda's requests to the editor waiting for their answers,
	// by id; ids count up from 0. Once disconnected, none is made.
	callsMu      sync.Mutex
	calls        map[int64]chan *envelope
	nextCall     int64
	disconnected bool
}

func newConn(opts Options, in io.Reader, out io.Writer) *conn {
	var trace *slog.Logger
	if opts.Trace {
		trace = opts.log()
	}
	o := newOutput(out, trace)
	c := &conn{log: opts.log(), in: newStream(in, o, opts.MaxMessageBytes, trace), out: o, drainTimeout: opts.DrainTimeout, calls: map[int64]chan *envelope{}}
	c.turns, c.cancelTurns = context.WithCancel(context.Background())
	return c
}

// serve runs the connection's life; handle gets each request (id set) and
// notification (id nil) read.
func (c *conn) serve(ctx context.Context, handle func(id json.RawMessage, method string, params json.RawMessage)) error {
	// 1. Serve.
	read := make(chan struct{})
	go func() {
		defer close(read)
		c.readLoop(handle)
	}()
	signalled := false
	select {
	case <-read:
	case <-ctx.Done():
		signalled = true
	case <-c.out.lost:
		// The client closed its end of stdout: nothing read could be
		// answered any more. What runs goes on to its answer.
	}

	// 2. Disconnect.
	c.mu.Lock()
	c.closing = true
	c.mu.Unlock()
	if signalled {
		c.cancelTurns()
	}
	c.disconnect()

	// 3. Drain.
	if !signalled {
		c.drain(ctx)
	}

	// 4. Cancel.
	c.cancelTurns()

	// 5. Wait.
	c.owed.Wait()

	// 6. Flush and close.
	if err := c.out.close(); err != nil {
		if c.out.gone() {
			// Not coda's failure: its turns ran to their answers, recorded
			// and in their sessions' files for the next session/load.
			c.log.Warn("the client went away; its turns ran to their answers, which are recorded", "err", err)
			return nil
		}
		return fmt.Errorf("writing to the client: %w", err)
	}
	return nil
}

// readLoop reads messages until stdin ends. Each is handled before the
// next is read; only a prompt's turn, and a load's, resume's or list's
// reading, leave the loop (begin).
func (c *conn) readLoop(handle func(id json.RawMessage, method string, params json.RawMessage)) {
	for {
		m, err := c.in.read()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				c.log.Warn("reading from the client", "err", err)
			}
			return
		}
		c.mu.Lock()
		closing := c.closing
		c.mu.Unlock()
		switch {
		case closing:
			// Shutting down after a signal: nothing read is handled.
		case m.Method != nil:
			handle(m.ID, *m.Method, m.Params)
		default:
			c.answered(m)
		}
	}
}

// drain waits for the answers owed, for at most the drain timeout; a signal
// ends it early.
func (c *conn) drain(ctx context.Context) {
	done := make(chan struct{})
	go func() { c.owed.Wait(); close(done) }()
	timer := time.NewTimer(c.drainTimeout)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
		c.log.Warn("stdin closed; cancelling the turns still running", "after", c.drainTimeout)
	case <-ctx.Done():
	case <-c.out.lost:
		// The client is gone, not waiting for coda to end: the turns run
		// on to their answers, bounded by their own limits (DESIGN §21).
		select {
		case <-done:
		case <-ctx.Done():
		}
	}
}

// errClosing refuses a prompt read while the connection shuts down.
var errClosing = errors.New("coda is shutting down: the prompt was not run")

// begin owes the answer to a request the read loop leaves to a goroutine (a
// prompt turn's), and returns the context that work runs under: cancelled
// by cancel, or at step 4. Call end once the answer is written. begin fails
// once the connection is shutting down.
func (c *conn) begin() (context.Context, context.CancelFunc, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing {
		return nil, nil, errClosing
	}
	c.owed.Add(1)
	ctx, cancel := context.WithCancel(c.turns)
	return ctx, cancel, nil
}

// beginHeld is begin for work that another answer still owed holds open
// (a session's queue, order.go): it owes an answer even while the
// connection shuts down, so what was read before stdin ended is handled
// (after a signal, under a context already cancelled).
func (c *conn) beginHeld() (context.Context, context.CancelFunc, error) {
	c.owed.Add(1)
	ctx, cancel := context.WithCancel(c.turns)
	return ctx, cancel, nil
}

// end says the answer begin owed is written.
func (c *conn) end() { c.owed.Done() }

// after writes an answer once done is closed, off the read loop: a
// session/close's, which waits for its session's turn to answer first. Call
// it only while that turn is owed (begun and not ended), so step 5 cannot
// have found nothing owed already.
func (c *conn) after(done <-chan struct{}, answer func()) {
	c.owed.Add(1)
	go func() {
		defer c.owed.Done()
		<-done
		answer()
	}()
}

// afterOrNow writes an answer once done is closed, off the read loop, when
// no turn owes it (a session/close's that waits for its MCP servers to
// stop). Once the connection is shutting down nothing new is owed: it
// answers at once, and the servers stop with the connection.
func (c *conn) afterOrNow(done <-chan struct{}, answer func()) {
	c.mu.Lock()
	closing := c.closing
	if !closing {
		c.owed.Add(1)
	}
	c.mu.Unlock()
	if closing {
		answer()
		return
	}
	go func() {
		defer c.owed.Done()
		<-done
		answer()
	}()
}

// Calls to the editor.

// errDisconnected fails a call to the editor once stdin has ended (or coda
// was signalled): no answer can come.
var errDisconnected = errors.New("the connection to the editor is closed")

// A clientError is the editor's error answer to one of coda's calls.
type clientError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *clientError) Error() string {
	return fmt.Sprintf("the editor answered %d: %s", e.Code, e.Message)
}

// call sends the editor a request and waits for its answer, decoded into
// result (when not nil), for ctx to end, or for the connection to end. A
// call whose ctx ends stops waiting; its answer, if one comes, is dropped.
// Calls are made off the read loop (in a turn's goroutine): the answer
// comes through it.
func (c *conn) call(ctx context.Context, method string, params, result any) error {
	c.callsMu.Lock()
	if c.disconnected {
		c.callsMu.Unlock()
		return errDisconnected
	}
	id := c.nextCall
	c.nextCall++
	answer := make(chan *envelope, 1)
	c.calls[id] = answer
	c.callsMu.Unlock()
	defer func() {
		c.callsMu.Lock()
		delete(c.calls, id)
		c.callsMu.Unlock()
	}()

	b := append(make([]byte, 0, 256), `{"id":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `,"jsonrpc":"2.0","method":`...)
	b = appendString(b, method)
	b = append(b, `,"params":`...)
	b, err := encodeJSON(b, params)
	if err != nil {
		return fmt.Errorf("encoding %s: %w", method, err)
	}
	if err := c.out.writeLine(append(b, '}')); err != nil {
		return err
	}

	select {
	case <-ctx.Done():
		return ctx.Err()
	case m, ok := <-answer:
		switch {
		case !ok:
			return errDisconnected
		case !isNull(m.Error):
			var e clientError
			if err := json.Unmarshal(m.Error, &e); err != nil {
				return fmt.Errorf("the editor's error answer to %s: %w", method, err)
			}
			return &e
		case result == nil || isNull(m.Result):
			return nil
		}
		return json.Unmarshal(m.Result, result)
	}
}

// answered hands an answer read to the call waiting for it; an answer to
// no call waiting (one abandoned, an id coda never used) is dropped.
func (c *conn) answered(m *envelope) {
	var answer chan *envelope
	if id, err := strconv.ParseInt(string(m.ID), 10, 64); err == nil {
		c.callsMu.Lock()
		answer = c.calls[id]
		delete(c.calls, id)
		c.callsMu.Unlock()
	}
	if answer == nil {
		c.log.Debug("ignoring an answer to no call coda is waiting on", "id", string(m.ID))
		return
	}
	answer <- m
}

// disconnect fails the calls waiting, and every call after.
func (c *conn) disconnect() {
	c.callsMu.Lock()
	defer c.callsMu.Unlock()
	c.disconnected = true
	for id, answer := range c.calls {
		close(answer)
		delete(c.calls, id)
	}
}
