package jsonrpc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// encoded is a message as read, encoded again: jsonrpc, id, method,
// params, result, error, those it has.
func encoded(m *envelope) string {
	b := []byte(`{"jsonrpc":"2.0"`)
	for _, f := range []struct {
		name string
		raw  json.RawMessage
	}{{"id", m.ID}, {"method", nil}, {"params", m.Params}, {"result", m.Result}, {"error", m.Error}} {
		if f.name == "method" && m.Method != nil {
			f.raw = AppendString(nil, *m.Method)
		}
		if f.raw != nil {
			b = append(append(append(b, `,"`...), f.name...), `":`...)
			b = append(b, f.raw...)
		}
	}
	return string(append(b, '}'))
}

// readAll reads in through a stream with the given line limit, and returns
// what it handed on and what it answered itself.
func readAll(t testing.TB, in io.Reader, max int) (handed []string, answered []string, s *stream) {
	t.Helper()
	var buf bytes.Buffer
	out := newOutput(&buf, nil)
	s = newStream(in, out, max, nil)
	for {
		m, err := s.read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		if line := encoded(m); !json.Valid([]byte(line)) {
			t.Fatalf("handed on a message that is not JSON: %q", line)
		} else {
			handed = append(handed, line)
		}
	}
	if err := out.close(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(&buf)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		answered = append(answered, sc.Text())
	}
	return handed, answered, s
}

// FuzzStream_ReadObject (.ci/run fuzzes it by this name, the reader's
// method when it served a JSON-RPC library) feeds arbitrary input to the
// line reader, with a small line limit so over-long lines are fuzzed too:
// it must never panic,
// every line it answers itself must be a JSON error object, it must read to
// the end (never give up early, as a JSON-RPC library's codecs do), and a line
// must never cost more memory than the limit.
func FuzzStream_ReadObject(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`,
		"not json\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"x\"}\n",
		`[{"jsonrpc":"2.0","id":1,"method":"a"}]`,
		`{"jsonrpc":"2.0","id":1.5,"method":"a"}`,
		`{"jsonrpc":"2.0","id":-7,"result":{}}`,
		`{"jsonrpc":"2.0","id":1,"method":"a","result":1}`,
		"\xff\xfe\n\n   \n{}",
		`{"jsonrpc":"2.0","id":"x","method":"a"}`,
		`{"jsonrpc":"2.0","id":99999999999999999999,"method":"a"}`,
		`{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"pad":"` + strings.Repeat("a", 200) + `"}}` + "\n{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"x\"}",
		`{"jsonrpc":"2.0","id":6,"result":{"content":"` + strings.Repeat("b", 200) + `"}}`,
	} {
		f.Add([]byte(seed))
	}
	const limit = 128
	f.Fuzz(func(t *testing.T, in []byte) {
		_, answered, s := readAll(t, bytes.NewReader(in), limit)
		for _, line := range answered {
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Fatalf("answered with a line that is not a JSON object: %q", line)
			}
			if _, ok := m["error"]; !ok {
				t.Fatalf("answered with something other than an error: %q", line)
			}
		}
		if s.peak > limit {
			t.Fatalf("a line took a %d-byte buffer; the limit is %d", s.peak, limit)
		}
	})
}

// A line over the limit is answered -32600, with the request's id when its
// first bytes hold it, and reading goes on; an over-long answer to one of
// coda's calls fails that call.
func TestStream_overLongLine(t *testing.T) {
	pad := strings.Repeat("a", 5000) // longer than the head kept of a line
	next := `{"jsonrpc":"2.0","id":99,"method":"initialize","params":{}}`
	tests := []struct {
		name     string
		line     string
		handed   []string
		answered []string
	}{{
		name:     "a request, id first",
		line:     `{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"pad":"` + pad + `"}}`,
		answered: []string{`{"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"invalid request: the message is %d bytes, over the limit of 256 (--max-message-bytes)"}}`},
	}, {
		name:     "a request with a string id",
		line:     `{"id":"p-1","jsonrpc":"2.0","method":"session/prompt","params":{"pad":"` + pad + `"}}`,
		answered: []string{`{"jsonrpc":"2.0","id":"p-1","error":{"code":-32600,"message":"invalid request: the message is %d bytes, over the limit of 256 (--max-message-bytes)"}}`},
	}, {
		name:     "the id after the long member",
		line:     `{"jsonrpc":"2.0","method":"session/prompt","params":{"pad":"` + pad + `"},"id":8}`,
		answered: []string{`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: the message is %d bytes, over the limit of 256 (--max-message-bytes)"}}`},
	}, {
		name:     "no method seen: not known to be a request",
		line:     `{"jsonrpc":"2.0","id":9,"params":{"pad":"` + pad + `"},"method":"x"}`,
		answered: []string{`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: the message is %d bytes, over the limit of 256 (--max-message-bytes)"}}`},
	}, {
		name:     "not JSON at all",
		line:     strings.Repeat("x", 10000),
		answered: []string{`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: the message is %d bytes, over the limit of 256 (--max-message-bytes)"}}`},
	}, {
		name:   "an answer to one of coda's calls",
		line:   `{"jsonrpc":"2.0","id":3,"result":{"content":"` + pad + `"}}`,
		handed: []string{`{"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"the client's answer is %d bytes, over the limit of 256 (--max-message-bytes)"}}`},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			handed, answered, s := readAll(t, strings.NewReader(tt.line+"\n"+next+"\n"), 256)
			// The messages name the line's length.
			for i := range tt.handed {
				tt.handed[i] = fmt.Sprintf(tt.handed[i], len(tt.line))
			}
			for i := range tt.answered {
				tt.answered[i] = fmt.Sprintf(tt.answered[i], len(tt.line))
			}
			if diff := cmp.Diff(append(tt.handed, next), handed); diff != "" {
				t.Errorf("handed on (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.answered, answered); diff != "" {
				t.Errorf("answered (-want +got):\n%s", diff)
			}
			if s.peak > 256 {
				t.Errorf("the line took a %d-byte buffer; the limit is 256", s.peak)
			}
		})
	}
	// A line of exactly the limit is read whole.
	exact := `{"jsonrpc":"2.0","id":1,"method":"x","params":{"p":"` + strings.Repeat("c", 200) + `"}}`
	handed, answered, _ := readAll(t, strings.NewReader(exact+"\n"), len(exact))
	if len(handed) != 1 || len(answered) != 0 {
		t.Errorf("a line of exactly the limit: handed %d, answered %v", len(handed), answered)
	}
}

// A line that is not JSON is -32700; JSON that is not one object (an
// array, a scalar, null) is -32600; the next line is read either way.
func TestStream_notAMessage(t *testing.T) {
	const (
		parse = `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: the line is not JSON"}}`
		batch = `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: a message must be one JSON object (batches are not supported)"}}`
	)
	next := `{"jsonrpc":"2.0","id":1,"method":"x"}`
	for line, want := range map[string]string{
		"not json":   parse,
		`{"a":`:      parse,
		`[1,`:        parse,
		`{"a":1} {}`: parse,
		`[{"jsonrpc":"2.0","id":1,"method":"x"}]`: batch,
		" 42":   batch,
		`"x"`:   batch,
		"null":  batch,
		"	true": batch,
	} {
		handed, answered, _ := readAll(t, strings.NewReader(line+"\n"+next+"\n"), 256)
		if diff := cmp.Diff([]string{want}, answered); diff != "" {
			t.Errorf("%q answered (-want +got):\n%s", line, diff)
		}
		if diff := cmp.Diff([]string{next}, handed); diff != "" {
			t.Errorf("%q, then handed on (-want +got):\n%s", line, diff)
		}
	}
}

// hugeLine is a reader of one request line of n bytes (a prompt padded with
// "a"), then rest, made as it is read: the test itself holds no such line.
type hugeLine struct {
	head, tail, rest string
	pad, read        int64
}

func newHugeLine(n int64, rest string) *hugeLine {
	head := `{"jsonrpc":"2.0","id":9,"method":"session/prompt","params":{"sessionId":"s-1","prompt":[{"type":"text","text":"`
	tail := `"}]}}` + "\n"
	return &hugeLine{head: head, tail: tail, rest: rest, pad: n - int64(len(head)+len(tail)-1)}
}

var padBlock = bytes.Repeat([]byte("a"), 64<<10)

func (h *hugeLine) Read(p []byte) (int, error) {
	var n int
	switch {
	case h.head != "":
		n = copy(p, h.head)
		h.head = h.head[n:]
	case h.pad > 0:
		n = copy(p[:min(int64(len(p)), h.pad)], padBlock)
		h.pad -= int64(n)
	case h.tail != "":
		n = copy(p, h.tail)
		h.tail = h.tail[n:]
	case h.rest != "":
		n = copy(p, h.rest)
		h.rest = h.rest[n:]
	default:
		return 0, io.EOF
	}
	h.read += int64(n)
	return n, nil
}

// A 100 MiB line is answered and dropped without being held: the reader's
// buffer never passes the limit (64 MiB by default, or a lower one), every
// byte is read, and the next message is served.
func TestStream_hugeLineMemory(t *testing.T) {
	next := `{"jsonrpc":"2.0","id":10,"method":"initialize","params":{}}` + "\n"
	for _, limit := range []int{DefaultMaxMessageBytes, 1 << 20} {
		in := newHugeLine(100<<20, next)
		handed, answered, s := readAll(t, in, limit)
		if in.read != 100<<20+1+int64(len(next)) {
			t.Errorf("limit %d: read %d bytes, want all %d", limit, in.read, 100<<20+1+len(next))
		}
		if len(handed) != 1 || !strings.Contains(handed[0], `"id":10`) {
			t.Errorf("limit %d: handed on %d messages, want the one after the huge line", limit, len(handed))
		}
		if len(answered) != 1 || !strings.HasPrefix(answered[0], `{"jsonrpc":"2.0","id":9,"error":{"code":-32600,`) {
			t.Errorf("limit %d: answered %.200q", limit, answered)
		}
		if s.peak > limit {
			t.Errorf("limit %d: the line took a %d-byte buffer", limit, s.peak)
		}
		t.Logf("limit %d: largest line buffer %d bytes for a %d-byte line", limit, s.peak, 100<<20)
	}
}

// A message nested deeper than encoding/json decodes (10,000 levels) is
// still a message: a request is answered with its own id, an answer to one
// of coda's calls fails that call, a notification is dropped; a deep line
// that is not JSON is still -32700. The next message is served.
func TestStream_tooDeep(t *testing.T) {
	deep := strings.Repeat("[", 10001) + strings.Repeat("]", 10001)
	next := `{"jsonrpc":"2.0","id":1,"method":"x"}`
	for _, tc := range []struct {
		line           string
		answered, hand string
	}{{
		line:     `{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"p":` + deep + `}}`,
		answered: `{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"invalid params: the message is nested more than 10000 levels deep, more than coda reads"}}`,
	}, {
		line:     `{"params":{"p":` + deep + `},"method":"session/prompt","id":"s-7","jsonrpc":"2.0"}`,
		answered: `{"jsonrpc":"2.0","id":"s-7","error":{"code":-32602,"message":"invalid params: the message is nested more than 10000 levels deep, more than coda reads"}}`,
	}, {
		line: `{"jsonrpc":"2.0","method":"session/cancel","params":` + deep + `}`,
	}, {
		line: `{"jsonrpc":"2.0","id":3,"result":` + deep + `}`,
		hand: `{"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"the client's answer is nested more than 10000 levels deep"}}`,
	}, {
		line:     `{"jsonrpc":"2.0","id":7,"method":"x","params":` + deep[:len(deep)-1] + `}`,
		answered: `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: the line is not JSON"}}`,
	}} {
		handed, answered, _ := readAll(t, strings.NewReader(tc.line+"\n"+next+"\n"), 1<<20)
		var want []string
		if tc.answered != "" {
			want = []string{tc.answered}
		}
		if diff := cmp.Diff(want, answered); diff != "" {
			t.Errorf("%.60q… answered (-want +got):\n%s", tc.line, diff)
		}
		wantHanded := []string{next}
		if tc.hand != "" {
			wantHanded = []string{tc.hand, next}
		}
		if diff := cmp.Diff(wantHanded, handed); diff != "" {
			t.Errorf("%.60q… handed on (-want +got):\n%s", tc.line, diff)
		}
	}
}
