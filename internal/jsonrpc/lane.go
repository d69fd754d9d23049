package jsonrpc

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
)

// A Lane is where a message is handled: on the read loop (Conn.Loop), or
// by work off the loop that owes an answer already and holds the
// connection open (Conn.Held: a key's held messages, order.go; a prompt
// that waited for its session's turn). The two differ in how work leaves
// them: from the loop it goes to a goroutine, owing its answer, and
// refused once the connection shuts down; off the loop it runs where it
// is, and what was read before the input ended is still handled.
type Lane interface {
	conn() *Conn
	// begin owes an answer to work that leaves the lane.
	begin() (context.Context, context.CancelFunc, error)
	// run runs job off the read loop, under a context that ends when
	// coda shuts down.
	run(ctx context.Context, job func(ctx context.Context)) error
}

// Loop is the read loop's lane.
func (c *Conn) Loop() Lane { return loopLane{c} }

// Held is the lane of work off the read loop that holds the connection
// open.
func (c *Conn) Held() Lane { return heldLane{c} }

type loopLane struct{ c *Conn }

func (l loopLane) conn() *Conn { return l.c }

func (l loopLane) begin() (context.Context, context.CancelFunc, error) { return l.c.Begin() }

func (l loopLane) run(_ context.Context, job func(ctx context.Context)) error {
	ctx, cancel, err := l.c.Begin()
	if err != nil {
		return err
	}
	go func() {
		defer l.c.End()
		defer cancel()
		job(ctx)
	}()
	return nil
}

type heldLane struct{ c *Conn }

func (l heldLane) conn() *Conn { return l.c }

func (l heldLane) begin() (context.Context, context.CancelFunc, error) {
	ctx, cancel := l.c.BeginHeld()
	return ctx, cancel, nil
}

func (heldLane) run(ctx context.Context, job func(ctx context.Context)) error {
	job(ctx)
	return nil
}

// Aside runs work off the read loop and answers r with what it returns
// (reading files whose size is the user's, beside other traffic), then
// runs what work asked to send after the answer (Request.Then), then
// then, under the same ctx, before the answer stops being owed. done runs
// before the answer, whatever work did. Work's ctx ends when coda shuts
// down, and an error of its ending answers ErrClosing. When work cannot
// start (the connection is shutting down), done and then still run, then
// under a context of their own, and the error is returned.
func Aside[R any](ctx context.Context, r *Request[R], done func(), work func(ctx context.Context) (*R, error), then func(ctx context.Context)) (*R, error) {
	answer := r.Keep()
	log := r.lane.conn().log
	err := r.lane.run(ctx, func(ctx context.Context) {
		var res *R
		var err error
		func() {
			defer func() {
				if p := recover(); p != nil {
					log.Error("panic handling a message", "method", r.method, "panic", p, "stack", string(debug.Stack()))
					err = fmt.Errorf("internal error handling %s", r.method)
				}
			}()
			res, err = work(ctx)
		}()
		if done != nil {
			done()
		}
		switch {
		case err == nil:
			answer.Reply(res)
			r.Answered() // what work asked to send after the answer
		case ctx.Err() != nil && errors.Is(err, ctx.Err()):
			answer.Fail(ErrClosing)
		default:
			answer.Fail(err)
		}
		if then != nil {
			then(ctx)
		}
	})
	if err != nil {
		r.kept = false
		if done != nil {
			done()
		}
		if then != nil {
			then(context.Background())
		}
		return nil, err
	}
	return nil, nil
}
