// Package jsonrpc is coda's JSON-RPC 2.0 over a byte stream (stdio), one
// compact message a line: the line reader (stream.go), the output
// (output.go), the connection's whole life and its calls to the client
// (conn.go, call.go), a typed method table (table.go), the lanes a message
// is handled on (lane.go), a key's messages held in order behind work off
// the read loop (order.go), and the JSON encoders the hot path appends
// with (encode.go). It knows nothing of ACP: acp is its user, and
// engine/layout_test.go holds that it imports nothing of it.
//
// It follows golang.org/x/tools' internal/jsonrpc2_v2 where that fits a
// stdio server: the connection's state (its answers owed, its calls
// waiting, whether it is closing) is one struct changed in one place
// (Conn.update); errors carry their own codes (Error); a request's id is
// kept as the client spelt it.
package jsonrpc

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

// Options configure a Conn. The zero value of every field works.
type Options struct {
	Log *slog.Logger // nil logs nowhere
	// MaxMessageBytes is the longest line read whole (default
	// DefaultMaxMessageBytes); a longer one is answered -32600 without
	// being held whole.
	MaxMessageBytes int
	// DrainTimeout bounds how long the work owing answers may run after
	// the input ends (default 30s).
	DrainTimeout time.Duration
	// Trace logs every message read and written, whole, at debug level.
	Trace bool
}

// A Handler gets each request (id set) and notification (id nil) read, in
// wire order, on the read loop, with the context work runs under.
type Handler func(ctx context.Context, id json.RawMessage, method string, params json.RawMessage)

// A Conn is the whole JSON-RPC connection: its life, its read loop, and
// the calls made to the client. Its life, in the order it happens:
//
//  1. serve: the read loop reads the messages and hands each request and
//     notification to the handler, in wire order, and each answer to the
//     call that waits for it, until the input ends, ctx is done (coda was
//     signalled) or a write to the output fails (the client is gone);
//  2. disconnect: no new work starts (Begin fails), nothing more read is
//     handled, and the calls to the client that are waiting fail at once,
//     as new ones do: no answer can come any more. After a signal the
//     work is cancelled first (step 4 comes early), so none takes the
//     disconnect for a client gone away and carries on;
//  3. drain: when the input ended, the work still running gets
//     DrainTimeout to finish; after a signal, none; when the client is
//     gone (a write failed), as long as it takes: nobody waits for coda to
//     end, and its answers are recorded for session/load;
//  4. cancel: the work still running is cancelled (the context Begin
//     gave it ends); each answers what it owes;
//  5. wait: until every answer owed is written (Begin's, After's);
//  6. flush and close the output.
//
// Work runs under the connection's own context, which only step 4 (or a
// signal) cancels.
type Conn struct {
	log          *slog.Logger
	in           *stream
	out          *output
	drainTimeout time.Duration

	work       context.Context
	cancelWork context.CancelFunc

	mu sync.Mutex
	st state // changed only in update
}

// state is what changes in a connection's life, under Conn.mu.
type state struct {
	closing      bool // set at step 2: no new work starts, nothing read is handled
	disconnected bool // set at step 2, after closing: calls to the client fail
	owed         int  // answers owed by work off the read loop
	// idle is closed when owed falls to 0; made by whoever waits for that.
	idle chan struct{}
	// calls are the requests to the client waiting for their answers, by
	// id; ids count up from 0.
	calls    map[int64]chan *envelope
	nextCall int64
}

// update changes the connection's state: the one place it changes.
func (c *Conn) update(f func(*state)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f(&c.st)
	if c.st.owed == 0 && c.st.idle != nil {
		close(c.st.idle)
		c.st.idle = nil
	}
}

// NewConn makes a connection that reads in and writes out; Serve runs it.
func NewConn(opts Options, in io.Reader, out io.Writer) *Conn {
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var trace *slog.Logger
	if opts.Trace {
		trace = log
	}
	if opts.DrainTimeout <= 0 {
		opts.DrainTimeout = 30 * time.Second
	}
	o := newOutput(out, trace)
	c := &Conn{log: log, in: newStream(in, o, opts.MaxMessageBytes, trace), out: o, drainTimeout: opts.DrainTimeout}
	c.st.calls = map[int64]chan *envelope{}
	c.work, c.cancelWork = context.WithCancel(context.Background())
	return c
}

// Serve runs the connection's life (steps 1 to 6); handle gets each
// request and notification read. It returns once every answer owed is
// written and the output closed; the error is the output's, if writing
// failed while the client was there to read it.
func (c *Conn) Serve(ctx context.Context, handle Handler) error {
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
		// The client closed its end of the output: nothing read could be
		// answered any more. What runs goes on to its answer.
	}

	// 2. Disconnect.
	c.update(func(st *state) { st.closing = true })
	if signalled {
		c.cancelWork()
	}
	c.disconnect()

	// 3. Drain.
	if !signalled {
		c.drain(ctx)
	}

	// 4. Cancel.
	c.cancelWork()

	// 5. Wait.
	c.Wait()

	// 6. Flush and close.
	if err := c.Close(); err != nil {
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

// readLoop reads messages until the input ends. Each is handled before the
// next is read; work that must wait leaves the loop (Begin, Aside).
func (c *Conn) readLoop(handle Handler) {
	for {
		m, err := c.in.read()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				c.log.Warn("reading from the client", "err", err)
			}
			return
		}
		var closing bool
		c.update(func(st *state) { closing = st.closing })
		switch {
		case closing:
			// Shutting down after a signal: nothing read is handled.
		case m.Method != nil:
			handle(c.work, m.ID, *m.Method, m.Params)
		default:
			c.answered(m)
		}
	}
}

// drain waits for the answers owed, for at most the drain timeout; a signal
// ends it early.
func (c *Conn) drain(ctx context.Context) {
	done := c.idle()
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

// idle returns a channel closed once no answer is owed.
func (c *Conn) idle() <-chan struct{} {
	var ch chan struct{}
	c.update(func(st *state) {
		if st.idle == nil {
			st.idle = make(chan struct{})
		}
		ch = st.idle // closed by update at once when nothing is owed
	})
	return ch
}

// Wait waits until no answer is owed (step 5).
func (c *Conn) Wait() { <-c.idle() }

// ErrClosing refuses work read while the connection shuts down.
var ErrClosing = errors.New("coda is shutting down: the prompt was not run")

// Begin owes the answer to a request the read loop leaves to a goroutine,
// and returns the context that work runs under: cancelled by cancel, or at
// step 4. Call End once the answer is written. Begin fails once the
// connection is shutting down.
func (c *Conn) Begin() (context.Context, context.CancelFunc, error) {
	var err error
	c.update(func(st *state) {
		if st.closing {
			err = ErrClosing
			return
		}
		st.owed++
	})
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithCancel(c.work)
	return ctx, cancel, nil
}

// BeginHeld is Begin for work that another answer still owed holds open
// (a key's held messages, order.go): it owes an answer even while the
// connection shuts down, so what was read before the input ended is
// handled (after a signal, under a context already cancelled).
func (c *Conn) BeginHeld() (context.Context, context.CancelFunc) {
	c.update(func(st *state) { st.owed++ })
	return context.WithCancel(c.work)
}

// End says an answer Begin owed is written.
func (c *Conn) End() { c.update(func(st *state) { st.owed-- }) }

// After writes an answer once done is closed, off the read loop (an answer
// that waits for a turn's). Call it only while that turn's answer is owed
// (begun and not ended), so step 5 cannot have found nothing owed already.
func (c *Conn) After(done <-chan struct{}, answer func()) {
	c.update(func(st *state) { st.owed++ })
	go func() {
		defer c.End()
		<-done
		answer()
	}()
}

// AfterOrNow writes an answer once done is closed, off the read loop, when
// no other answer owed holds the connection open. Once the connection is
// shutting down nothing new is owed: it answers at once.
func (c *Conn) AfterOrNow(done <-chan struct{}, answer func()) {
	var closing bool
	c.update(func(st *state) {
		closing = st.closing
		if !closing {
			st.owed++
		}
	})
	if closing {
		answer()
		return
	}
	go func() {
		defer c.End()
		<-done
		answer()
	}()
}

// Write writes one message, a line of compact JSON without its newline.
func (c *Conn) Write(line []byte) error { return c.out.writeLine(line) }

// Sent waits until every message written so far is flushed to the client
// (or the output failed or closed).
func (c *Conn) Sent() { c.out.sent() }

// Gone reports whether the client is gone: a write to it failed.
func (c *Conn) Gone() bool { return c.out.gone() }

// Close flushes and closes the output (step 6); later writes fail. Serve
// calls it; a Conn never served (a test's) is closed by its owner.
func (c *Conn) Close() error { return c.out.close() }

// Reply writes a result response; id is as the client sent it.
func (c *Conn) Reply(id json.RawMessage, result any) {
	b := make([]byte, 0, 256)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"result":`...)
	b = AppendJSON(b, result)
	b = append(b, '}')
	if err := c.out.writeLine(b); err != nil {
		c.log.Debug("writing a reply", "err", err)
	}
}

// ReplyError writes an error response, with optional data.
func (c *Conn) ReplyError(id json.RawMessage, code int, msg string, data any) {
	b := appendError(make([]byte, 0, 128+len(msg)), id, code, msg, data)
	if err := c.out.writeLine(b); err != nil {
		c.log.Debug("writing a reply", "err", err)
	}
}

// ReplyErr answers a request with err's code (CodeOf); an internal error
// is logged with its chain.
func (c *Conn) ReplyErr(id json.RawMessage, method string, err error) {
	code := CodeOf(err)
	if code == CodeInternalError {
		c.log.Error("request failed", "method", method, "err", err)
	}
	c.ReplyError(id, code, err.Error(), nil)
}

// appendError appends an error response: id is already encoded (nil is
// null), data is left out when nil. Every error answered is made here.
func appendError(b, id []byte, code int, msg string, data any) []byte {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	if id == nil {
		id = []byte("null")
	}
	b = append(b, id...)
	b = append(b, `,"error":{"code":`...)
	b = strconv.AppendInt(b, int64(code), 10)
	b = append(b, `,"message":`...)
	b = AppendString(b, msg)
	if data != nil {
		b = append(b, `,"data":`...)
		b = AppendJSON(b, data)
	}
	return append(b, "}}"...)
}
