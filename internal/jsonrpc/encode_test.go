package jsonrpc

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAppendCompact(t *testing.T) {
	tests := []struct{ raw, want string }{
		{`{"a":1}`, `{"a":1}`},
		{"{\n  \"path\": \"a b.md\",\n\t\"n\" : [ 1 ,\r\n 2 ] }\n", `{"path":"a b.md","n":[1,2]}`},
		{`{"s": "keeps  \t inner space, \"quotes\" and \\ escapes\n"}`, `{"s":"keeps  \t inner space, \"quotes\" and \\ escapes\n"}`},
		{`{"html": "<b>&</b>"}`, `{"html":"<b>&</b>"}`},
		{"{\"ls\": \"a\u2028b\u2029c\"}", `{"ls":"a\u2028b\u2029c"}`},
		{"{\"bad\": \"a\xffb\"}", `{"bad":"a\ufffdb"}`},
		{"  42 ", `42`},
		{"{\n  \"path\": \"cut off", `"{\n  \"path\": \"cut off"`},
		{"", `""`},
	}
	for _, tt := range tests {
		if got := string(AppendCompact([]byte("x:"), []byte(tt.raw))); got != "x:"+tt.want {
			t.Errorf("AppendCompact(%q) = %s, want x:%s", tt.raw, got, tt.want)
		}
	}
}

// FuzzAppendCompact: whatever a model writes, the result is one line of
// valid JSON; for valid JSON it is the same value, compact.
func FuzzAppendCompact(f *testing.F) {
	for _, s := range []string{`{"a": [1, 2, {"b": "c d"}]}`, "{\n\"x\":\"\\u00e9\"\n}", `not json`, `"\u2028"`, "[\n]"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		out := AppendCompact(nil, raw)
		if bytes.ContainsAny(out, "\n\r") || !json.Valid(out) {
			t.Fatalf("AppendCompact(%q) = %q: not one line of JSON", raw, out)
		}
		if !json.Valid(raw) {
			return
		}
		var want, got any
		json.Unmarshal(raw, &want)
		json.Unmarshal(out, &got)
		if !reflect.DeepEqual(want, got) { // cmp.Diff takes minutes on deep nesting
			t.Fatalf("AppendCompact(%q) changed the value (-want +got):\n%s", raw, cmp.Diff(want, got))
		}
	})
}

// FuzzAppendString holds AppendString to encoding/json: the same bytes as
// an Encoder with SetEscapeHTML(false) writes for the string.
func FuzzAppendString(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		got := AppendString([]byte("x:"), s)
		want, err := EncodeJSON([]byte("x:"), s)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Fatalf("AppendString(%q) = %s\nencoding/json: %s", s, got, want)
		}
		var back string
		if json.Unmarshal(got[2:], &back) != nil {
			t.Fatalf("AppendString(%q) = %s: not a JSON string", s, got)
		}
	})
}
