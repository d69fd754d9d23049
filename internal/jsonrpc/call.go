package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// Calls to the client.

// ErrDisconnected fails a call to the client once the input has ended (or
// coda was signalled): no answer can come.
var ErrDisconnected = errors.New("the connection to the editor is closed")

// Call sends the client a request and waits for its answer, decoded into
// result (when not nil), for ctx to end, or for the connection to end. A
// call whose ctx ends stops waiting; its answer, if one comes, is dropped.
// Calls are made off the read loop (in a turn's goroutine): the answer
// comes through it. An error answer is a *ClientError.
func (c *Conn) Call(ctx context.Context, method string, params, result any) error {
	var id int64
	answer := make(chan *envelope, 1)
	var err error
	c.update(func(st *state) {
		if st.disconnected {
			err = ErrDisconnected
			return
		}
		id = st.nextCall
		st.nextCall++
		st.calls[id] = answer
	})
	if err != nil {
		return err
	}
	defer c.update(func(st *state) { delete(st.calls, id) })

	b := append(make([]byte, 0, 256), `{"id":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `,"jsonrpc":"2.0","method":`...)
	b = AppendString(b, method)
	b = append(b, `,"params":`...)
	b, err = EncodeJSON(b, params)
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
			return ErrDisconnected
		case !IsNull(m.Error):
			var e ClientError
			if err := json.Unmarshal(m.Error, &e); err != nil {
				return fmt.Errorf("the editor's error answer to %s: %w", method, err)
			}
			return &e
		case result == nil || IsNull(m.Result):
			return nil
		}
		return json.Unmarshal(m.Result, result)
	}
}

// answered hands an answer read to the call waiting for it; an answer to
// no call waiting (one abandoned, an id never used) is dropped.
func (c *Conn) answered(m *envelope) {
	var answer chan *envelope
	if id, err := strconv.ParseInt(string(m.ID), 10, 64); err == nil {
		c.update(func(st *state) {
			answer = st.calls[id]
			delete(st.calls, id)
		})
	}
	if answer == nil {
		c.log.Debug("ignoring an answer to no call coda is waiting on", "id", string(m.ID))
		return
	}
	answer <- m
}

// disconnect fails the calls waiting, and every call after.
func (c *Conn) disconnect() {
	c.update(func(st *state) {
		st.disconnected = true
		for id, answer := range st.calls {
			close(answer)
			delete(st.calls, id)
		}
	})
}
