package validators

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCompileSchema_Errors(t *testing.T) {
	for _, tc := range []struct{ name, schema, msg string }{
		{"not JSON", "{\n  \"type\": }", "the schema is not JSON: line 2, column 11: invalid character '}'"},
		{"unknown type", `{"properties": {"a": {"type": ["string", "nul"]}}}`, `the schema's "type" at /properties/a/type is "nul", which is not a JSON type`},
		{"unresolved local ref", `{"$ref": "#/$defs/missing"}`, `the schema's $ref "#/$defs/missing" does not resolve`},
		{"relative ref", `{"$id": "https://example.com/root.json", "$ref": "other.json"}`, "does not resolve (schemas are never fetched over the network"},
		{"bad pattern", `{"pattern": "("}`, `the schema's pattern at /pattern, "(", is not a regular expression`},
		{"ECMA-262 pattern property with unevaluatedProperties", `{"patternProperties": {"^(?!x-)": {}}, "unevaluatedProperties": false}`, "coda cannot check the two together"},
		{"pattern property that is no regex", `{"patternProperties": {"(": {}}}`, `names "(", which is not a regular expression`},
		{"duplicate key", `{"properties": {"a": {}, "a": {}}}`, "the key /properties/a appears twice in one object"},
		{"unknown type in a subschema of an extension keyword's sibling", `{"x-form": {"type": "widget"}, "items": {"type": "strng"}}`, `"type" at /items/type is "strng"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := CompileSchema([]byte(tc.schema))
			if err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("CompileSchema = %v, want an error containing %q", err, tc.msg)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
		})
	}
}

func TestCompileSchema_Offline(t *testing.T) {
	// These compile without any network: the dialects are built in, and a
	// type name under const or enum is data, not a type.
	for _, s := range []string{
		`true`,
		`{}`,
		`{"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object"}`,
		`{"$schema": "http://json-schema.org/draft-07/schema#", "definitions": {"a": {"type": "string"}}, "$ref": "#/definitions/a"}`,
		`{"properties": {"type": {"const": {"type": "anything"}}, "kind": {"enum": [{"type": "x"}]}}}`,
		`{"$id": "https://example.com/s.json", "$defs": {"n": {"type": "integer"}}, "items": {"$ref": "#/$defs/n"}}`,
	} {
		if _, err := CompileSchema([]byte(s)); err != nil {
			t.Errorf("CompileSchema(%s): %v", s, err)
		}
	}
}

// TestCompileSchema_NoNetwork serves schemas on loopback: compiling
// schemas that point at them must fail without a single request.
func TestCompileSchema_NoNetwork(t *testing.T) {
	var requests atomic.Int32
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Header().Set("Content-Type", "application/schema+json")
		fmt.Fprint(w, `{"type": "string"}`)
	})
	plain := httptest.NewServer(handler)
	defer plain.Close()
	tls := httptest.NewTLSServer(handler)
	defer tls.Close()

	for _, base := range []string{plain.URL, tls.URL} {
		for _, s := range []string{
			`{"$ref": "` + base + `/s.json"}`,
			`{"properties": {"a": {"$ref": "` + base + `/s.json#/$defs/x"}}}`,
			`{"$id": "` + base + `/root.json", "items": {"$ref": "item.json"}}`,
			`{"$dynamicRef": "` + base + `/s.json#meta"}`,
		} {
			if _, err := CompileSchema([]byte(s)); err == nil {
				t.Errorf("CompileSchema(%s) compiled; want an unresolved $ref error", s)
			}
		}
		// A meta-schema on the server: nothing fetches it either.
		_, _ = CompileSchema([]byte(`{"$schema": "` + base + `/meta.json", "type": "string"}`))
	}
	if n := requests.Load(); n != 0 {
		t.Fatalf("the loopback servers saw %d requests, want 0", n)
	}
}

const testSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$defs": {
    "item": {
      "type": "object",
      "required": ["name"],
      "properties": {"name": {"type": "string", "minLength": 2}}
    }
  },
  "type": "object",
  "required": ["items", "id"],
  "additionalProperties": false,
  "properties": {
    "id": {},
    "items": {"type": "array", "maxItems": 3, "items": {"$ref": "#/$defs/item"}},
    "a/b~c": {"type": "integer"},
    "kind": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
    "n": {"type": "integer", "minimum": 3},
    "c": {"if": {"type": "string"}, "then": {"minLength": 3}, "else": {"type": "integer"}},
    "s": {"if": {"type": "string"}, "then": {"minLength": 3}}
  }
}`

func TestSchema_Validate(t *testing.T) {
	s, err := CompileSchema([]byte(testSchema))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, format, content string
		want                  []Violation
	}{
		{"valid", "json", `{"id": 1, "items": [{"name": "ab"}], "n": 3, "c": "abc", "s": 5}`, nil},
		{"leaves with absolute escaped pointers", "json",
			`{"items": [{"name": "x"}, {"nam": 1}, {"name": 5}, {"name": "ok"}], "a/b~c": 1.5, "kind": true, "extra": 1, "n": 2, "c": true, "s": "ab"}`,
			[]Violation{
				{"", "Required property 'id' is missing"},
				{"/a~1b~0c", "Value is number but should be integer"},
				{"/c", "Value is boolean but should be integer"},
				{"/extra", `property "extra" is not allowed here`},
				{"/items", "Value should have at most 3 items"},
				{"/items/0/name", "Value should be at least 2 characters"},
				{"/items/1", "Required property 'name' is missing"}, // and no "null is not a string" for the missing name
				{"/items/2/name", "Value is integer but should be string"},
				{"/kind", "Value does not match anyOf schema (Value is boolean but should be integer; or Value is boolean but should be string)"},
				{"/n", "2 should be at least 3"},
				{"/s", "Value should be at least 3 characters"},
			}},
		{"yaml data", "yaml", "id: 1\nitems:\n  - name: x\nn: 3\n", []Violation{{"/items/0/name", "Value should be at least 2 characters"}}},
		{"toml data", "toml", "id = 1\nn = 1\n[[items]]\nname = \"ok\"\n", []Violation{{"/n", "1 should be at least 3"}}},
		{"root type", "json", `[1, 2]`, []Violation{{"", "Value is array but should be object"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := Decode(tc.format, tc.content)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, s.Validate(data)); diff != "" {
				t.Errorf("Validate (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSchema_ValidateConcurrent(t *testing.T) {
	s, err := CompileSchema([]byte(testSchema))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			data, _ := Decode("json", fmt.Sprintf(`{"items": [{"name": "x"}], "n": %d}`, i))
			if vs := s.Validate(data); len(vs) < 2 {
				t.Errorf("got %v, want at least 2 violations", vs)
			}
		}()
	}
	wg.Wait()
}

// TestSchema_ValidateConcurrent_patterns: kaptinlin writes a compiled
// pattern into the schema as it checks; Validate serialises, so -race
// finds nothing.
func TestSchema_ValidateConcurrent_patterns(t *testing.T) {
	s, err := CompileSchema([]byte(`{"properties": {"id": {"pattern": "^c[0-9]+$"}, "kind": {"enum": ["a", "b"]}},
	  "patternProperties": {"^x-": {"type": "string"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			data, _ := Decode("json", fmt.Sprintf(`{"id": "c%d", "kind": "a", "x-%d": "v"}`, i, i))
			if vs := s.Validate(data); vs != nil {
				t.Errorf("got %v", vs)
			}
		})
	}
	wg.Wait()
}

func TestSchema_ValidateBig(t *testing.T) {
	s, err := CompileSchema([]byte(bigSchema))
	if err != nil {
		t.Fatal(err)
	}
	data, err := Decode("json", bigJSON(answerCap))
	if err != nil {
		t.Fatal(err)
	}
	if vs := s.Validate(data); vs != nil {
		t.Fatalf("the generated document breaks its schema:\n%s", FormatViolations(vs, 5))
	}
}

func TestFormatViolations(t *testing.T) {
	var vs []Violation
	for i := range 25 {
		vs = append(vs, Violation{fmt.Sprintf("/items/%d", i), "bad"})
	}
	vs[0].Pointer = ""
	got := FormatViolations(vs, 20)
	lines := strings.Split(got, "\n")
	if len(lines) != 21 {
		t.Fatalf("got %d lines, want 21:\n%s", len(lines), got)
	}
	if lines[0] != "(root): bad" || lines[19] != "/items/19: bad" || lines[20] != "... and 5 more (25 in all)" {
		t.Errorf("unexpected lines:\n%s", got)
	}
	if got := FormatViolations(vs[:3], 20); strings.Count(got, "\n") != 2 || strings.Contains(got, "more") {
		t.Errorf("short list:\n%s", got)
	}
	if got := FormatViolations(vs, 0); strings.Count(got, "\n") != 24 {
		t.Errorf("uncapped list has %d lines", strings.Count(got, "\n")+1)
	}
	if got := FormatViolations(nil, 20); got != "" {
		t.Errorf("empty list = %q", got)
	}
}

func TestComparePointers(t *testing.T) {
	ordered := []string{"", "/a", "/a/2", "/a/10", "/a/10/x", "/b", "/b~1c"}
	for i := range ordered {
		for j := range ordered {
			got := comparePointers(ordered[i], ordered[j])
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got != want {
				t.Errorf("comparePointers(%q, %q) = %d, want %d", ordered[i], ordered[j], got, want)
			}
		}
	}
}
