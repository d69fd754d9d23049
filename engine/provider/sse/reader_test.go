package sse

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

type ev struct{ Name, Data string }

func readAll(t *testing.T, r io.Reader) ([]ev, error) {
	t.Helper()
	sr := NewReader(r)
	var out []ev
	for {
		e, err := sr.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, ev{string(e.Name), string(e.Data)})
	}
}

func TestReader_Next(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []ev
	}{
		{"data lines", "data: a\n\ndata: b\n\n", []ev{{"", "a"}, {"", "b"}}},
		{"CRLF", "data: a\r\n\r\ndata: b\r\n\r\n", []ev{{"", "a"}, {"", "b"}}},
		{"comments and other fields", ": keep-alive\n\nid: 1\nretry: 10\ndata: x\n\n: ping\n", []ev{{"", "x"}}},
		{"event names", "event: ping\ndata: {\"type\": \"ping\"}\n\nevent: message_stop\ndata: {}\n\n", []ev{{"ping", `{"type": "ping"}`}, {"message_stop", "{}"}}},
		{"an event without data is not dispatched, nor is its name kept", "event: a\n\ndata: 1\n\n", []ev{{"", "1"}}},
		{"multi-line data", "data: {\ndata:  \"a\": 1\ndata: }\n\n", []ev{{"", "{\n \"a\": 1\n}"}}},
		{"no space after the colon", "data:x\n\n", []ev{{"", "x"}}},
		{"last event without a blank line", "data: 1\n\ndata: [DONE]", []ev{{"", "1"}, {"", "[DONE]"}}},
		{"last event with one newline", "data: [DONE]\n", []ev{{"", "[DONE]"}}},
		{"empty", "", nil},
		{"a line longer than the buffer", "data: " + strings.Repeat("x", 200<<10) + "\n\n", []ev{{"", strings.Repeat("x", 200<<10)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, r := range []io.Reader{strings.NewReader(tt.in), iotest.OneByteReader(strings.NewReader(tt.in))} {
				got, err := readAll(t, r)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestReader_Next_errors(t *testing.T) {
	boom := errors.New("connection reset")
	r := io.MultiReader(strings.NewReader("data: 1\n\ndata: 2"), iotest.ErrReader(boom))
	got, err := readAll(t, r)
	if !errors.Is(err, boom) {
		t.Errorf("error %v, want %v", err, boom)
	}
	if diff := cmp.Diff([]ev{{"", "1"}}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}

	huge := strings.NewReader("data: " + strings.Repeat("x", MaxEventSize+1))
	if _, err := readAll(t, huge); !errors.Is(err, ErrTooLarge) {
		t.Errorf("huge line: error %v", err)
	}
}

func FuzzReader(f *testing.F) {
	f.Add("data: a\n\nevent: x\ndata: b\r\n\r\n: c\n")
	f.Add("data:\ndata\n\n")
	f.Fuzz(func(t *testing.T, in string) {
		r := NewReader(strings.NewReader(in))
		for range len(in) + 2 {
			e, err := r.Next()
			if err != nil {
				return
			}
			if len(e.Data) > len(in) {
				t.Fatalf("data longer than the input")
			}
		}
		t.Fatalf("more events than input bytes")
	})
}

// countingReader counts what was read from it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// A line that never ends fails the stream once it passes the cap, whatever
// its field, without the reader taking in much more than the cap.
func TestReader_Next_lineCap(t *testing.T) {
	for _, prefix := range []string{"data: ", ": ", "event: ", "x"} {
		cr := &countingReader{r: io.MultiReader(strings.NewReader(prefix), endless('x'))}
		_, err := NewReader(cr).Next()
		if !errors.Is(err, ErrTooLarge) {
			t.Errorf("%q: error %v", prefix, err)
		}
		if cr.n > MaxEventSize+128<<10 {
			t.Errorf("%q: read %d bytes for a cap of %d", prefix, cr.n, MaxEventSize)
		}
	}
	// Many data lines that add up to more than the cap fail too.
	line := "data: " + strings.Repeat("y", 1<<20) + "\n"
	many := io.MultiReader(strings.NewReader(strings.Repeat(line, 64)), strings.NewReader("\n"))
	if _, err := NewReader(many).Next(); !errors.Is(err, ErrTooLarge) {
		t.Errorf("many lines: error %v", err)
	}
	// A line of exactly the cap is read whole, into the event's data alone.
	exact := "data: " + strings.Repeat("z", MaxEventSize) + "\r\n\r\n"
	e, err := NewReader(strings.NewReader(exact)).Next()
	if err != nil || len(e.Data) != MaxEventSize || e.Data[len(e.Data)-1] != 'z' {
		t.Errorf("a line at the cap: %d bytes, %v", len(e.Data), err)
	}
}
