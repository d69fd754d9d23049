package acp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"testing"

	"github.com/sourcegraph/jsonrpc2"
)

// decoded is what the library decodes a message into; ReadObject must only
// hand it messages it can decode.
type decoded struct{ raw json.RawMessage }

func (d *decoded) UnmarshalJSON(b []byte) error {
	d.raw = append(d.raw[:0], b...)
	// The library's own decoding: a request or a response.
	var req jsonrpc2.Request
	var resp jsonrpc2.Response
	if req.UnmarshalJSON(b) == nil {
		return nil
	}
	return resp.UnmarshalJSON(b)
}

// FuzzStream_ReadObject feeds arbitrary input to the line reader: it must
// never panic, every line it answers itself must be one JSON object, and
// it must read to the end (never give up early, as the library's codecs do).
func FuzzStream_ReadObject(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`,
		"not json\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"x\"}\n",
		`[{"jsonrpc":"2.0","id":1,"method":"a"}]`,
		`{"jsonrpc":"2.0","id":1.5,"method":"a"}`,
		`{"jsonrpc":"2.0","id":-7,"result":{}}`,
		`{"jsonrpc":"2.0","id":1,"method":"a","result":1}`,
		"\xff\xfe\n\n   \n{}",
		`{"jsonrpc":"1.0","id":"x","method":"a"}`,
		`{"jsonrpc":"2.0","id":99999999999999999999,"method":"a"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var out bytes.Buffer
		s := newStream(bytes.NewReader(in), &out)
		for {
			var d decoded
			err := s.ReadObject(&d)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("ReadObject: %v", err)
			}
			if !json.Valid(d.raw) {
				t.Fatalf("handed on a line that is not JSON: %q", d.raw)
			}
		}
		s.Close()
		sc := bufio.NewScanner(&out)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Fatalf("answered with a line that is not a JSON object: %q", sc.Bytes())
			}
			if _, ok := m["error"]; !ok {
				t.Fatalf("answered with something other than an error: %q", sc.Bytes())
			}
		}
	})
}
