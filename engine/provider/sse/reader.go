// Package sse is what the streaming model providers share: a reader of
// server-sent event streams (the framing both OpenAI's and Anthropic's APIs
// use) and the retry policy for their HTTP calls.
package sse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// MaxEventSize caps one event's data, so a server that never ends an event
// cannot make the reader grow without bound.
const MaxEventSize = 16 << 20

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
	line    []byte // a line longer than br's buffer, assembled
	name    []byte
	data    []byte
	hasData bool
}

// NewReader returns a Reader of r.
func NewReader(r io.Reader) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, 64<<10)}
}

// Next returns the next event with data. At the end of the stream it returns
// io.EOF; an event the stream ended in the middle of (no blank line after it)
// is still returned first, since several servers close the body right after
// their last "data:" line.
func (r *Reader) Next() (Event, error) {
	r.name = r.name[:0]
	r.data = r.data[:0]
	r.hasData = false
	for {
		line, err := r.readLine()
		if err != nil {
			if err == io.EOF && r.hasData {
				return Event{Name: r.name, Data: r.data}, nil
			}
			return Event{}, err
		}
		if len(line) == 0 {
			if r.hasData {
				return Event{Name: r.name, Data: r.data}, nil
			}
			r.name = r.name[:0] // an event without data is not dispatched
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(field) {
		case "data":
			if r.hasData {
				r.data = append(r.data, '\n')
			}
			if len(r.data)+len(value) > MaxEventSize {
				return Event{}, fmt.Errorf("sse: event larger than %d bytes", MaxEventSize)
			}
			r.data = append(r.data, value...)
			r.hasData = true
		case "event":
			r.name = append(r.name[:0], value...)
		}
	}
}

// readLine returns the next line without its line ending. The slice is only
// valid until the next read. A last line without a line ending is returned
// as is; io.EOF comes after it.
func (r *Reader) readLine() ([]byte, error) {
	line, err := r.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		r.line = append(r.line[:0], line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			line, err = r.br.ReadSlice('\n')
			if len(r.line)+len(line) > MaxEventSize {
				return nil, fmt.Errorf("sse: line longer than %d bytes", MaxEventSize)
			}
			r.line = append(r.line, line...)
		}
		line = r.line
	}
	if err != nil && (err != io.EOF || len(line) == 0) {
		return nil, err
	}
	line = bytes.TrimSuffix(line, []byte("\n"))
	line = bytes.TrimSuffix(line, []byte("\r"))
	return line, nil
}
