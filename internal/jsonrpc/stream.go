package jsonrpc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"unicode/utf8"
)

// DefaultMaxMessageBytes is the longest line coda reads whole when
// Options.MaxMessageBytes is not set.
const DefaultMaxMessageBytes = 64 << 20

// headBytes is how much of an over-long line is kept, to find its id.
const headBytes = 4 << 10

// stream reads the client's lines, one message each, and decodes their
// envelope. It never gives up over a bad line: it answers -32700 or -32600
// itself, through the connection's output, and reads on.
//
// A line longer than max is never held whole: past the limit it is read and
// dropped, and answered -32600. Its id is read from its first bytes when they
// hold it before any member too long to read there (clients write "id"
// before "params"): a request is answered with its own id, so the client is
// not left waiting; an answer to one of coda's calls fails that call; anything
// else is answered with id null.
type stream struct {
	r    *bufio.Reader
	out  *output
	max  int
	line []byte // reused read buffer
	// peak is the largest capacity line has reached: what a line cost in
	// memory at most (tests check it stays within max).
	peak int
	// trace, when set, logs every line read, whole (--trace).
	trace *slog.Logger
}

func newStream(in io.Reader, out *output, max int, trace *slog.Logger) *stream {
	if max <= 0 {
		max = DefaultMaxMessageBytes
	}
	return &stream{r: bufio.NewReaderSize(in, 64<<10), out: out, max: max, trace: trace}
}

// read returns the next message: a request or notification (Method set,
// ID nil for a notification) or an answer to one of coda's calls (ID set,
// Result or Error). Everything else is answered here. At the input's end it
// returns io.EOF.
func (s *stream) read() (*envelope, error) {
	for {
		line, long, err := s.readLine()
		switch {
		case long > 0:
			if m := s.tooLong(line, long); m != nil {
				return m, nil
			}
		case len(bytes.TrimSpace(line)) > 0:
			if s.trace != nil {
				s.trace.Debug("wire ←", "message", string(line))
			}
			if m := s.screen(line); m != nil {
				return m, nil
			}
		}
		if err != nil {
			return nil, err
		}
	}
}

// readLine reads the next line, without its newline. A line longer than
// s.max is not kept: readLine returns its first bytes and its length as
// long, having read and dropped the rest.
func (s *stream) readLine() (line []byte, long int, err error) {
	if cap(s.line) > 1<<20 {
		// The last line was large: do not keep its buffer alive.
		s.line = nil
	}
	s.line = s.line[:0]
	for {
		chunk, err := s.r.ReadSlice('\n')
		body := bytes.TrimSuffix(chunk, []byte("\n"))
		switch {
		case long > 0:
			long += len(body)
		case len(s.line)+len(body) > s.max:
			// Over the limit: keep the start, to find the id, and drop
			// the rest as it comes.
			long = len(s.line) + len(body)
			head := append(make([]byte, 0, headBytes), s.line[:min(len(s.line), headBytes)]...)
			s.line = append(head, body[:min(len(body), headBytes-len(head))]...)
		default:
			s.grow(len(body))
			s.line = append(s.line, body...)
		}
		if err != bufio.ErrBufferFull {
			return s.line, long, err
		}
	}
}

// grow makes room for n more bytes of a line, never past the limit, so a
// line costs no more memory than the limit allows.
func (s *stream) grow(n int) {
	need := len(s.line) + n
	if need <= cap(s.line) {
		return
	}
	buf := make([]byte, len(s.line), max(need, min(2*cap(s.line), s.max)))
	copy(buf, s.line)
	s.line = buf
	s.peak = max(s.peak, cap(buf))
}

// tooLong answers a line over the limit, of which head is the start and n
// the length. It returns the message to hand on in its place, if any: an
// error answering one of coda's own calls, which then fails at once.
func (s *stream) tooLong(head []byte, n int) *envelope {
	if s.trace != nil {
		s.trace.Debug("wire ← (over the limit, dropped)", "bytes", n, "start", string(head))
	}
	size := fmt.Sprintf("%d bytes, over the limit of %d (--max-message-bytes)", n, s.max)
	id, request, response := peekEnvelope(head)
	if !validID(id) || IsNull(id) {
		id = nil
	}
	switch {
	case response && id != nil:
		e := AppendJSON(nil, ClientError{Code: CodeInvalidRequest, Message: "the client's answer is " + size})
		return &envelope{ID: id, Error: e}
	case request && id != nil:
		s.writeError(id, CodeInvalidRequest, "invalid request: the message is "+size)
	default:
		s.writeError(nil, CodeInvalidRequest, "invalid request: the message is "+size)
	}
	return nil
}

// maxDepth is how deeply encoding/json decodes nested values.
const maxDepth = 10000

// tooDeep answers a line that encoding/json would not decode for being
// nested more than maxDepth deep. Walked token by token (which keeps no
// limit on depth), it is either not JSON after all (-32700), or a message
// that is answered as one over the size limit is: a request with its own
// id, so the client is not left waiting; an answer to one of coda's calls
// fails that call.
func (s *stream) tooDeep(line []byte) *envelope {
	dec := json.NewDecoder(bytes.NewReader(line))
	var m envelope
	request, response, ok := false, false, false
	if tok, err := dec.Token(); err == nil && tok == json.Delim('{') {
		ok = true
		for ok && dec.More() {
			tok, err := dec.Token()
			key, isKey := tok.(string)
			if err != nil || !isKey {
				ok = false
				break
			}
			switch key {
			case "id", "jsonrpc", "method":
				var raw json.RawMessage
				if dec.Decode(&raw) != nil {
					ok = false
				}
				switch key {
				case "id":
					m.ID = raw
				case "method":
					request = true
				}
			default:
				response = response || key == "result" || key == "error"
				ok = skipValue(dec)
			}
		}
		if ok {
			_, err := dec.Token() // the closing brace
			_, end := dec.Token()
			ok = err == nil && end == io.EOF
		}
	}
	if !ok {
		s.writeError(nil, CodeParseError, "parse error: the line is not JSON")
		return nil
	}
	id := m.ID
	if !validID(id) || IsNull(id) {
		id = nil
	}
	deep := fmt.Sprintf("nested more than %d levels deep", maxDepth)
	switch {
	case response && !request && id != nil:
		e := AppendJSON(nil, ClientError{Code: CodeInvalidRequest, Message: "the client's answer is " + deep})
		return &envelope{ID: id, Error: e}
	case request && id != nil:
		s.writeError(id, CodeInvalidParams, "invalid params: the message is "+deep+", more than coda reads")
	case !request && !response:
		s.writeError(id, CodeInvalidRequest, "invalid request: no method")
	}
	return nil // a notification, or an answer to nothing: nothing to answer
}

// skipValue reads one value of dec token by token, however deep.
func skipValue(dec *json.Decoder) bool {
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return true
		}
	}
}

// peekEnvelope reads what it can of a message's envelope from its first
// bytes: its id, and whether it is a request (it has a method) or a
// response (a result or an error). It stops at the first member it cannot
// read whole.
func peekEnvelope(head []byte) (id json.RawMessage, request, response bool) {
	dec := json.NewDecoder(bytes.NewReader(head))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false, false
	}
	for dec.More() {
		tok, err := dec.Token()
		key, ok := tok.(string)
		if err != nil || !ok {
			break
		}
		switch key {
		case "method":
			request = true
		case "result", "error":
			response = true
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			break
		}
		if key == "id" {
			id = raw
		}
	}
	return id, request, response
}

// envelope is a message as read: its members undecoded but for the
// method. The table decodes a request's params, the call an answer's
// result.
type envelope struct {
	JSONRPC *string         `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"` // as the client spelt it; nil when absent or null
	Method  *string         `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// screen answers a line that is not a request, notification or answer
// (-32700, -32600) and returns nil for it; otherwise it returns the
// message's envelope, decoded in the one pass.
func (s *stream) screen(line []byte) *envelope {
	if !utf8.Valid(line) {
		s.writeError(nil, CodeParseError, "parse error: the line is not valid UTF-8")
		return nil
	}
	// One pass tells what is not JSON (Unmarshal checks the whole line
	// before it decodes, and says so with a SyntaxError) from what is JSON
	// but no message.
	var m envelope
	err := json.Unmarshal(line, &m)
	var syntax *json.SyntaxError
	if errors.As(err, &syntax) {
		if strings.Contains(syntax.Error(), "exceeded max depth") {
			return s.tooDeep(line)
		}
		s.writeError(nil, CodeParseError, "parse error: the line is not JSON")
		return nil
	}
	if line = bytes.TrimSpace(line); line[0] != '{' {
		s.writeError(nil, CodeInvalidRequest, "invalid request: a message must be one JSON object (batches are not supported)")
		return nil
	}
	if err != nil {
		s.writeError(nil, CodeInvalidRequest, "invalid request: "+err.Error())
		return nil
	}
	id := m.ID
	if !validID(id) {
		s.writeError(nil, CodeInvalidRequest, "invalid request: id must be a string, an integer or null")
		return nil
	}
	if IsNull(id) {
		id = nil
	}
	isResponse := m.Result != nil || m.Error != nil
	switch {
	case m.JSONRPC == nil || *m.JSONRPC != "2.0":
		s.writeError(id, CodeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`)
		return nil
	case m.Method != nil && isResponse:
		s.writeError(id, CodeInvalidRequest, "invalid request: a message cannot have both a method and a result or error")
		return nil
	case m.Method == nil && !isResponse:
		s.writeError(id, CodeInvalidRequest, "invalid request: no method")
		return nil
	case isResponse && id == nil:
		return nil // a response to nothing: nothing to answer
	case m.Error != nil && !IsNull(m.Error):
		var e ClientError
		if err := json.Unmarshal(m.Error, &e); err != nil {
			s.writeError(id, CodeInvalidRequest, "invalid request: error: "+err.Error())
			return nil
		}
	}
	m.ID = id
	return &m
}

// IsNull reports whether raw is absent or null.
func IsNull(raw json.RawMessage) bool { return len(raw) == 0 || string(raw) == "null" }

// validID accepts a JSON-RPC id: absent, null, a string, or an integer
// that fits int64.
func validID(raw json.RawMessage) bool {
	if IsNull(raw) {
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
	return s.out.writeLine(appendError(make([]byte, 0, 96+len(msg)), id, code, msg, nil))
}

// IDKey is a map key for a request id: the same for one id however it is
// spelt (a string's escapes, a number's form); false for what is no id.
func IDKey(raw json.RawMessage) (string, bool) {
	var v any
	if IsNull(raw) || json.Unmarshal(raw, &v) != nil {
		return "", false
	}
	switch v := v.(type) {
	case string:
		return "s:" + v, true
	case float64:
		var n json.Number
		if json.Unmarshal(raw, &n) == nil {
			if i, err := n.Int64(); err == nil {
				return "n:" + strconv.FormatInt(i, 10), true
			}
		}
	}
	return "", false
}

// KeyOf is the key of a request's own id, which the line reader has
// checked is one.
func KeyOf(id json.RawMessage) string {
	key, _ := IDKey(id)
	return key
}
