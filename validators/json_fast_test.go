package validators

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
)

// fastJSONDocs are read by the fast path (fast) or left to encoding/json.
var fastJSONDocs = []struct {
	doc  string
	fast bool
}{
	{`{}`, true},
	{` [ ] `, true},
	{`{"a": [1, -0, 2.5, 1e3, 1E-2, 9223372036854775807, 9223372036854775808, -12e400, 0.0]}`, true},
	{`{"s": "plain", "u": "é ✓ 😀", "e": "a\"b\\c\/d\b\f\n\r\t", "x": "\u00e9\ud83d\ude00"}`, true},
	{`{"lone": "\ud800", "low": "\udc00x", "pair?": "\ud800\u0041", "bad": "` + "\xff\xfe" + `"}`, true},
	{`{"k\u0065y": true, "n": null, "f": false, "nested": {"a": [{"b": []}]}}`, true},
	{"\n\t{\"a\" :1 , \"b\":[ 2 ,3 ] }\r\n", true},
	{`{"a": 1, "a": 2}`, false},
	{`{"a": 1, "\u0061": 2}`, false},
	{`{"a": 01}`, false},
	{`{"a": 1.}`, false},
	{`{"a": .5}`, false},
	{`{"a": -}`, false},
	{`{"a": 1e}`, false},
	{`{"a": +1}`, false},
	{`{"a": "\x"}`, false},
	{`{"a": "\u12"}`, false},
	{"{\"a\": \"tab\there\"}", false},
	{`{"a": tru}`, false},
	{`{"a": 1,}`, false},
	{`[1, 2,]`, false},
	{`{"a" 1}`, false},
	{`{a: 1}`, false},
	{`{} {}`, false},
	{`{}x`, false},
	{"\ufeff{}", false},
	{``, false},
	{strings.Repeat("[", fastJSONDepth+1) + strings.Repeat("]", fastJSONDepth+1), false},
	{strings.Repeat("[", fastJSONDepth) + strings.Repeat("]", fastJSONDepth), true},
}

// TestFastJSON: what the fast path reads, it reads as encoding/json does;
// what it leaves, decodeJSON still decides the same way.
func TestFastJSON(t *testing.T) {
	for _, tc := range fastJSONDocs {
		got, ok := fastJSON(tc.doc)
		if ok != tc.fast {
			t.Errorf("fastJSON(%.40q) ok = %v, want %v", tc.doc, ok, tc.fast)
		}
		want, wantErr := decodeJSONStd(tc.doc)
		v, err := decodeJSON(tc.doc)
		if !reflect.DeepEqual(want, v) || !sameError(err, wantErr) {
			t.Errorf("decodeJSON(%.40q) = %.80v, %v; encoding/json: %.80v, %v", tc.doc, v, err, want, wantErr)
		}
		if ok && wantErr != nil {
			t.Errorf("fastJSON(%.40q) read what encoding/json refuses: %v", tc.doc, wantErr)
		}
		if ok && !reflect.DeepEqual(want, got) {
			t.Errorf("fastJSON(%.40q) (-encoding/json +fast):\n%s", tc.doc, cmp.Diff(want, got))
		}
	}
}

func sameError(a, b error) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Error() == b.Error()
}

// TestFastJSON_sharesStrings: an answer's strings without escapes are
// pieces of the answer, not copies.
func TestFastJSON_sharesStrings(t *testing.T) {
	doc := `{"s": "no escapes here"}`
	v, ok := fastJSON(doc)
	if !ok {
		t.Fatal("not read")
	}
	s := v.(map[string]any)["s"].(string)
	if unsafe.StringData(s) != unsafe.StringData(doc[7:]) {
		t.Fatalf("%q is a copy", s)
	}
}

// FuzzJSON_fast holds the fast path to encoding/json: what it reads,
// encoding/json reads to the same data; JSONMembers and JSONString split
// and unquote as json.Unmarshal does.
func FuzzJSON_fast(f *testing.F) {
	addSeeds(f)
	for _, tc := range fastJSONDocs {
		f.Add(tc.doc)
	}
	f.Add(big("json", 4<<10))
	f.Add(`{"content": "{\"a\": \"\\u00e9\"}\n", "artifacts": ["x", {"path": "y"}], "content": 1}`)
	f.Fuzz(func(t *testing.T, doc string) {
		if got, ok := fastJSON(doc); ok {
			want, err := decodeJSONStd(doc)
			if err != nil {
				t.Fatalf("fastJSON(%q) read what encoding/json refuses: %v", doc, err)
			}
			if !reflect.DeepEqual(want, got) {
				t.Fatalf("fastJSON(%q) (-encoding/json +fast):\n%s", doc, cmp.Diff(want, got))
			}
		}

		var want map[string]json.RawMessage
		wantErr := json.Unmarshal([]byte(doc), &want)
		got, ok := JSONMembers(doc)
		switch {
		case ok && wantErr != nil:
			t.Fatalf("JSONMembers(%q) split what json.Unmarshal refuses: %v", doc, wantErr)
		case !ok && wantErr == nil && strings.TrimSpace(doc) != "null" && strings.Count(doc, "[")+strings.Count(doc, "{") <= fastJSONDepth:
			t.Fatalf("JSONMembers(%q) refused what json.Unmarshal splits", doc)
		case ok:
			if len(got) != len(want) {
				t.Fatalf("JSONMembers(%q) = %q, json.Unmarshal: %q", doc, got, want)
			}
			for k, w := range want {
				if g, in := got[k]; !in || g != string(w) {
					t.Fatalf("JSONMembers(%q)[%q] = %q, json.Unmarshal: %q", doc, k, g, w)
				}
			}
		}

		var s string
		wantErr = json.Unmarshal([]byte(doc), &s)
		str, ok := JSONString(doc)
		if strings.TrimSpace(doc) != "null" && (ok != (wantErr == nil) || str != s) {
			t.Fatalf("JSONString(%q) = %q, %v; json.Unmarshal: %q, %v", doc, str, ok, s, wantErr)
		}
	})
}
