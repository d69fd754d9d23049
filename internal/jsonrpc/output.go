package jsonrpc

import (
	"bufio"
	"errors"
	"io"
	"log/slog"
	"sync"
)

// errOutputClosed fails a write after the connection flushed and closed its
// output: nothing more can be said to the client.
var errOutputClosed = errors.New("acp: the output is closed")

// output is the protocol stream: every message coda sends (replies,
// notifications, its own requests) is one line written here, under one
// mutex, so lines never interleave. A flusher goroutine empties the buffer
// as soon as the writer is idle, so a burst of notifications costs one write
// system call, not one each.
//
// Only the connection's owner (conn) closes it, after every answer owed has
// been written.
type output struct {
	mu      sync.Mutex
	w       *bufio.Writer
	err     error      // the first write error, or errOutputClosed; later writes fail with it
	pending bool       // a flush is scheduled
	written int64      // lines written so far
	flushed int64      // of which flushed to the client
	out     *sync.Cond // signalled at each flush
	kick    chan struct{}
	stop    chan struct{} // closed by close: the flusher returns
	stopped chan struct{} // closed when the flusher has returned
	// lost is closed at the first write that fails: the client is gone
	// (its end of stdout closed). The turns run on to their answers
	// (DESIGN §21); nothing more is written.
	lost     chan struct{}
	lostOnce sync.Once
	// trace, when set, logs every line written, whole (--trace).
	trace *slog.Logger
}

func newOutput(w io.Writer, trace *slog.Logger) *output {
	o := &output{
		w:       bufio.NewWriterSize(w, 64<<10),
		kick:    make(chan struct{}, 1),
		stop:    make(chan struct{}),
		stopped: make(chan struct{}),
		lost:    make(chan struct{}),
		trace:   trace,
	}
	o.out = sync.NewCond(&o.mu)
	go o.flusher()
	return o
}

// sent waits until every line written so far is flushed to the client (or
// the output failed or closed): what a turn does after its answer (its
// record) starts once the answer is out.
func (o *output) sent() {
	o.mu.Lock()
	defer o.mu.Unlock()
	for target := o.written; o.flushed < target && o.err == nil; {
		o.out.Wait()
	}
}

func (o *output) flusher() {
	defer close(o.stopped)
	for {
		select {
		case <-o.kick:
		case <-o.stop:
			return
		}
		o.mu.Lock()
		o.pending = false
		if o.err == nil {
			o.err = o.w.Flush()
			o.noteLost()
		}
		o.flushed = o.written
		o.out.Broadcast()
		o.mu.Unlock()
	}
}

// noteLost closes lost when a write failed; o.mu is held.
func (o *output) noteLost() {
	if o.err != nil && !errors.Is(o.err, errOutputClosed) {
		o.lostOnce.Do(func() { close(o.lost) })
	}
}

// gone reports whether the client is gone: a write to it failed.
func (o *output) gone() bool {
	select {
	case <-o.lost:
		return true
	default:
		return false
	}
}

// writeLine writes one message (without its newline) and schedules a flush.
func (o *output) writeLine(b []byte) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.err != nil {
		return o.err
	}
	if o.trace != nil {
		o.trace.Debug("wire →", "message", string(b))
	}
	o.w.Write(b)
	o.w.WriteByte('\n')
	o.written++
	if !o.pending {
		o.pending = true
		select {
		case o.kick <- struct{}{}:
		default:
		}
	}
	return nil
}

// close flushes what is buffered and stops the flusher; later writes fail
// with errOutputClosed. It returns the first write error, if any.
func (o *output) close() error {
	close(o.stop)
	<-o.stopped
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.err == nil {
		o.err = o.w.Flush()
		o.noteLost()
	}
	err := o.err
	o.err = errOutputClosed
	o.out.Broadcast()
	if errors.Is(err, errOutputClosed) {
		return nil
	}
	return err
}
