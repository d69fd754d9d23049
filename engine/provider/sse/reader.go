// Package sse is what the streaming model providers share: a reader of
// server-sent event streams (the framing both OpenAI's and Anthropic's APIs
// use), the HTTP call with its time limits and retry policy, and the
// accumulation of streamed text.
package sse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// MaxEventSize caps one line of the stream and one event's data, so that a
// server that never ends a line or an event cannot make the reader grow
// without bound. It is generous because a server may send a whole tool call
// in one "data:" line (Ollama does); it matches the cap on an ACP line.
const MaxEventSize = 64 << 20

// MaxToolCalls bounds the tool calls (and, for the Responses API, the
// output items) one reply may make: each is held until the reply ends, so
// a server that never stops starting new ones would otherwise grow the
// reply without bound.
const MaxToolCalls = 1 << 12

// ErrTooLarge is wrapped by the error of a stream whose line or event passes
// MaxEventSize. Another try would meet the same reply, so it is final.
var ErrTooLarge = errors.New("the server sent a line or an event larger than 64 MiB")

var errTooLarge = fmt.Errorf("sse: %w", ErrTooLarge)

// An Event is one dispatched server-sent event. Name is the "event:" field
// (empty when the server sent none); Data is the "data:" lines joined with
// "\n". Both are only valid until the next call to Next.
type Event struct {
	Name []byte
	Data []byte
}

// A Reader reads events from a text/event-stream body. Comment lines
// (": keep-alive"), "id:" and "retry:" fields are skipped. Lines may end in
// "\n" or "\r\n".
type Reader struct {
	br      *bufio.Reader
	name    []byte
	data    []byte
	hasData bool
	lines   bool // NDJSON: each line is an event's data
}

// keepBuffer is the largest data buffer kept from one event to the next: a
// huge event's buffer is let go rather than held for the rest of the stream.
const keepBuffer = 1 << 20

// NewReader returns a Reader of r.
func NewReader(r io.Reader) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, 64<<10)}
}

// NewLineReader returns a Reader of a stream of JSON lines (NDJSON, as
// Ollama's own API streams): each line that is not blank is one event, its
// Data the line without its ending, its Name empty. A line is held to
// MaxEventSize as an event's data is.
func NewLineReader(r io.Reader) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, 64<<10), lines: true}
}

// nextLine is Next for a line reader.
func (r *Reader) nextLine() (Event, error) {
	for {
		r.data = r.data[:0]
		var err error
		for {
			var chunk []byte
			chunk, err = r.br.ReadSlice('\n')
			if len(r.data)+len(chunk) > MaxEventSize+len("\r\n") {
				return Event{}, errTooLarge
			}
			r.data = append(r.data, chunk...)
			if !errors.Is(err, bufio.ErrBufferFull) {
				break
			}
		}
		if err != nil && err != io.EOF {
			return Event{}, err
		}
		if line := bytes.TrimSpace(r.data); len(line) > 0 {
			return Event{Data: line}, nil
		}
		if err == io.EOF {
			return Event{}, io.EOF
		}
	}
}

// Next returns the next event with data. At the end of the stream it returns
// io.EOF; an event the stream ended in the middle of (no blank line after it)
// is still returned first, since several servers close the body right after
// their last "data:" line.
func (r *Reader) Next() (Event, error) {
	if cap(r.data) > keepBuffer {
		r.data = nil
	}
	if r.lines {
		return r.nextLine()
	}
	r.name = r.name[:0]
	r.data = r.data[:0]
	r.hasData = false
	for {
		blank, err := r.line()
		if err != nil {
			if err == io.EOF && r.hasData {
				return Event{Name: r.name, Data: r.data}, nil
			}
			return Event{}, err
		}
		if blank {
			if r.hasData {
				return Event{Name: r.name, Data: r.data}, nil
			}
			r.name = r.name[:0] // an event without data is not dispatched
		}
	}
}

// line reads one line and takes in its field. A "data" value is appended to
// the event's data straight from the read buffer, a piece at a time, so that
// a long line is held once, in the event, and never assembled on its own;
// fields the reader does not use are skipped without being held. blank
// reports an empty line, which ends an event. A last line without a line
// ending is taken as is; io.EOF comes after it.
func (r *Reader) line() (blank bool, err error) {
	chunk, err := r.br.ReadSlice('\n')
	more := errors.Is(err, bufio.ErrBufferFull)
	if err != nil && !more && (err != io.EOF || len(chunk) == 0) {
		return false, err
	}
	if !more && len(trimEOL(chunk)) == 0 {
		return true, nil
	}
	var dst *[]byte // where the value goes; nil skips it
	start := 0      // where this line's value starts in *dst
	field, value, hasColon := bytes.Cut(chunk, []byte(":"))
	if !hasColon {
		field, value = trimEOL(chunk), nil
		if more {
			field = nil // a field name longer than the buffer: no field coda knows
		}
	}
	switch string(field) {
	case "data":
		if r.hasData {
			r.data = append(r.data, '\n')
		}
		r.hasData = true
		dst, start = &r.data, len(r.data)
	case "event":
		r.name = r.name[:0]
		dst = &r.name
	}
	// One space after the colon is not part of the value. It may be the
	// first byte of the next piece when the colon ends this one.
	space := hasColon
	size := len(chunk)
	for {
		if space && len(value) > 0 {
			space = false
			if value[0] == ' ' {
				value = value[1:]
			}
		}
		if dst != nil {
			if len(*dst)+len(value) > MaxEventSize+len("\r\n") {
				return false, errTooLarge
			}
			*dst = append(*dst, value...)
		}
		if !more {
			break
		}
		chunk, err = r.br.ReadSlice('\n')
		more = errors.Is(err, bufio.ErrBufferFull)
		if err != nil && !more && (err != io.EOF || len(chunk) == 0) {
			return false, err
		}
		if size += len(chunk); size > MaxEventSize+lineSlack {
			return false, errTooLarge
		}
		value = chunk
	}
	if dst != nil {
		v := (*dst)[start:]
		if *dst = (*dst)[:start+len(trimEOL(v))]; len(*dst) > MaxEventSize {
			return false, errTooLarge
		}
	}
	return false, nil
}

// lineSlack is what a line may hold besides a value of MaxEventSize bytes:
// its field name, colon, space and line ending.
const lineSlack = 16

// trimEOL drops a line ending ("\n" or "\r\n").
func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte("\n"))
	return bytes.TrimSuffix(b, []byte("\r"))
}
