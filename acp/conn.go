package acp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/sourcegraph/jsonrpc2"
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
	err := s.conn.serve(ctx, s)
	// 7. Stop the sessions' MCP servers: every turn that could call them
	// has answered.
	s.mcp.Close()
	return err
}

// A conn is the whole life of one connection, in the order it happens:
//
//  1. serve: messages are read and handled in wire order (Server.Handle)
//     until stdin ends or ctx is done (coda was signalled);
//  2. disconnect: no new turn starts, and the JSON-RPC connection closes, so
//     coda's calls to the editor (permission, fs/*, terminal/*) that are
//     waiting fail at once, as new ones do: no answer can come any more.
//     After a signal the turns are cancelled first (step 4 comes early), so
//     none takes the closing for an editor gone away and carries on;
//  3. drain: when stdin ended, the turns still running get DrainTimeout to
//     finish; after a signal, none;
//  4. cancel: the turns still running are cancelled; each answers its
//     prompt "cancelled" and finishes its run record;
//  5. wait: until every answer owed is written (each prompt's, and each
//     session/close's that waits for its session's turn);
//  6. flush and close the output;
//  7. stop the sessions' MCP servers (Serve returns once they are gone).
//
// Turns run under the connection's own context, turns: the JSON-RPC library
// never sees it (it would close the stream when it ends), and only step 4
// cancels it.
type conn struct {
	log          *slog.Logger
	in           *stream
	out          *output
	drainTimeout time.Duration

	turns       context.Context
	cancelTurns context.CancelFunc

	// rpc is the library's connection, for coda's calls to the editor:
	// set and read on the read loop (client).
	rpc *jsonrpc2.Conn

	mu      sync.Mutex
	closing bool           // set at step 2: no new turn starts
	owed    sync.WaitGroup // answers the read loop left to goroutines
}

func newConn(opts Options, in io.Reader, out io.Writer) *conn {
	var trace *slog.Logger
	if opts.Trace {
		trace = opts.log()
	}
	o := newOutput(out, trace)
	c := &conn{log: opts.log(), in: newStream(in, o, opts.MaxMessageBytes, trace), out: o, drainTimeout: opts.DrainTimeout}
	c.turns, c.cancelTurns = context.WithCancel(context.Background())
	return c
}

func (c *conn) serve(ctx context.Context, h jsonrpc2.Handler) error {
	// 1. Serve. The library runs the read loop, calling h for each request.
	rpc := jsonrpc2.NewConn(context.Background(), c.in, h, jsonrpc2.SetLogger(slogLogger{c.log}))
	signalled := false
	select {
	case <-rpc.DisconnectNotify():
	case <-ctx.Done():
		signalled = true
	}

	// 2. Disconnect. At stdin's end the library has closed the connection
	// already, failing the calls that were waiting; after a signal it is
	// closed here, once the turns are cancelled.
	c.mu.Lock()
	c.closing = true
	c.mu.Unlock()
	if signalled {
		c.cancelTurns()
	}
	rpc.Close()

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
		return fmt.Errorf("writing to the client: %w", err)
	}
	return nil
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

// client is the connection coda calls the editor on; nil outside Serve.
func (c *conn) client() *jsonrpc2.Conn { return c.rpc }

// slogLogger adapts slog to jsonrpc2's logger.
type slogLogger struct{ l *slog.Logger }

func (l slogLogger) Printf(format string, v ...any) { l.l.Debug(fmt.Sprintf(format, v...)) }
