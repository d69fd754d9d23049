package acp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"unicode/utf8"
)

// JSON-RPC error codes.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
	codeInternalError  = -32603
)

// stream is coda's jsonrpc2.ObjectStream: one compact JSON object per line.
// Unlike the library's codecs it never closes the connection over a bad
// line: it answers -32700 or -32600 itself and reads on.
//
// All writes (the library's, coda's own replies and notifications) go
// through one buffered writer under one mutex. A flusher goroutine empties
// the buffer as soon as the writer is idle, so a burst of notifications
// costs one write system call, not one each.
type stream struct {
	r *bufio.Reader

	mu      sync.Mutex
	w       *bufio.Writer
	out     io.Writer
	err     error // the first write error; later writes fail with it
	pending bool  // a flush is scheduled
	kick    chan struct{}
	closed  chan struct{}
	once    sync.Once

	line []byte // reused read buffer

	// atEOF, when set, runs before ReadObject reports the end of input:
	// the server waits there for in-flight turns to be answered.
	atEOF func()
}

func newStream(in io.Reader, out io.Writer) *stream {
	s := &stream{
		r:      bufio.NewReaderSize(in, 64<<10),
		w:      bufio.NewWriterSize(out, 64<<10),
		out:    out,
		kick:   make(chan struct{}, 1),
		closed: make(chan struct{}),
	}
	go s.flusher()
	return s
}

func (s *stream) flusher() {
	for {
		select {
		case <-s.kick:
		case <-s.closed:
			return
		}
		s.mu.Lock()
		s.pending = false
		if s.err == nil {
			s.err = s.w.Flush()
		}
		s.mu.Unlock()
	}
}

// writeLine writes one message (without its newline) and schedules a flush.
func (s *stream) writeLine(b []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	s.w.Write(b)
	s.w.WriteByte('\n')
	if !s.pending {
		s.pending = true
		select {
		case s.kick <- struct{}{}:
		default:
		}
	}
	return nil
}

// flush writes out whatever is buffered, now.
func (s *stream) flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = s.w.Flush()
	}
	return s.err
}

// WriteObject implements jsonrpc2.ObjectStream: compact JSON, not
// HTML-escaped.
func (s *stream) WriteObject(obj any) error {
	b, err := encodeJSON(nil, obj)
	if err != nil {
		return err
	}
	return s.writeLine(b)
}

// ReadObject implements jsonrpc2.ObjectStream. It returns only messages the
// library can decode; everything else is answered here.
func (s *stream) ReadObject(v any) error {
	for {
		line, err := s.readLine()
		if len(bytes.TrimSpace(line)) > 0 {
			if msg := s.screen(line); msg != nil {
				if jerr := json.Unmarshal(line, v); jerr == nil {
					return nil
				} else {
					s.writeError(msg.ID, codeInvalidRequest, "invalid request: "+jerr.Error())
				}
			}
		}
		if err != nil {
			if s.atEOF != nil {
				s.atEOF()
			}
			s.flush()
			if errors.Is(err, io.EOF) {
				return io.EOF
			}
			return err
		}
	}
}

// readLine reads one line of any length, without its newline.
func (s *stream) readLine() ([]byte, error) {
	if cap(s.line) > 1<<20 {
		// The last line was huge: do not keep its buffer alive.
		s.line = nil
	}
	s.line = s.line[:0]
	for {
		chunk, err := s.r.ReadSlice('\n')
		s.line = append(s.line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if n := len(s.line); n > 0 && s.line[n-1] == '\n' {
			s.line = s.line[:n-1]
		}
		return s.line, err
	}
}

// envelope is what screen reads of a message.
type envelope struct {
	JSONRPC *string         `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  *string         `json:"method"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// screen answers a line that is not a request or response the library can
// decode (-32700, -32600) and returns nil for it; otherwise it returns the
// message's envelope.
func (s *stream) screen(line []byte) *envelope {
	if !utf8.Valid(line) {
		s.writeError(nil, codeParseError, "parse error: the line is not valid UTF-8")
		return nil
	}
	if !json.Valid(line) {
		s.writeError(nil, codeParseError, "parse error: the line is not JSON")
		return nil
	}
	if line = bytes.TrimSpace(line); line[0] != '{' {
		s.writeError(nil, codeInvalidRequest, "invalid request: a message must be one JSON object (batches are not supported)")
		return nil
	}
	var m envelope
	if err := json.Unmarshal(line, &m); err != nil {
		s.writeError(nil, codeInvalidRequest, "invalid request: "+err.Error())
		return nil
	}
	id := m.ID
	if !validID(id) {
		s.writeError(nil, codeInvalidRequest, "invalid request: id must be a string, an integer or null")
		return nil
	}
	if isNull(id) {
		id = nil
	}
	isResponse := m.Result != nil || m.Error != nil
	switch {
	case m.JSONRPC == nil || *m.JSONRPC != "2.0":
		s.writeError(id, codeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`)
		return nil
	case m.Method != nil && isResponse:
		s.writeError(id, codeInvalidRequest, "invalid request: a message cannot have both a method and a result or error")
		return nil
	case m.Method == nil && !isResponse:
		s.writeError(id, codeInvalidRequest, "invalid request: no method")
		return nil
	case isResponse && id == nil:
		return nil // a response to nothing: nothing to answer
	}
	m.ID = id
	return &m
}

func isNull(raw json.RawMessage) bool { return len(raw) == 0 || string(raw) == "null" }

// validID accepts what the library can decode: absent, null, a string, or
// an integer that fits int64.
func validID(raw json.RawMessage) bool {
	if isNull(raw) {
		return true
	}
	switch raw[0] {
	case '"':
		return true
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		var n json.Number
		if json.Unmarshal(raw, &n) != nil {
			return false
		}
		_, err := n.Int64()
		return err == nil
	}
	return false
}

// writeError writes an error response; id nil writes "id": null.
func (s *stream) writeError(id json.RawMessage, code int, msg string) error {
	b := make([]byte, 0, 96+len(msg))
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	if id == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, id...)
	}
	b = append(b, `,"error":{"code":`...)
	b = appendInt(b, int64(code))
	b = append(b, `,"message":`...)
	b = appendString(b, msg)
	b = append(b, "}}"...)
	return s.writeLine(b)
}

// Close implements jsonrpc2.ObjectStream.
func (s *stream) Close() error {
	s.once.Do(func() { close(s.closed) })
	return s.flush()
}
