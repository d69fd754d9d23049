package validators

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// quickSchemas have enums of strings where a quick schema rewrites them,
// and where it must not.
var quickSchemas = []string{
	`{"enum": ["low", "medium", "high"]}`,
	`{"type": ["string", "null"], "enum": ["a.b", "a|b", "", "x\ny", "(", "é", "low"]}`,
	`{"type": "integer", "enum": ["a"]}`,
	`{"enum": ["a", 1, null]}`,
	`{"pattern": "^a", "enum": ["ab", "b"]}`,
	`{"enum": ["a", "\ufffd"]}`,
	`{"not": {"enum": ["low"]}}`,
	`{"anyOf": [{"enum": ["a"]}, {"type": "integer"}], "if": {"enum": ["b"]}, "then": false}`,
	`{"type": "object", "required": ["s"], "properties": {"s": {"enum": ["low", "high"]}, "enum": {"type": "string"}},
	  "additionalProperties": {"enum": ["x"]}, "patternProperties": {"^p": {"enum": ["y"]}},
	  "dependentRequired": {"enum": ["s"]}, "default": {"enum": ["z"]}}`,
	`{"type": "array", "items": {"$ref": "#/$defs/level"}, "$defs": {"level": {"enum": ["low", "high"]}},
	  "contains": {"enum": ["high"]}, "unevaluatedItems": false}`,
	`{"$schema": "http://json-schema.org/draft-07/schema#", "items": [{"enum": ["a"]}], "additionalItems": {"enum": ["b"]},
	  "definitions": {"d": {"enum": ["c"]}}, "dependencies": {"x": {"enum": ["d"]}, "y": ["x"]}}`,
}

var quickInstances = []string{
	`"low"`, `"medium"`, `"high"`, `"Low"`, `"low "`, `"low\n"`, `"lowhigh"`, `""`, `"a.b"`, `"axb"`, `"a|b"`, `"a"`,
	`"b"`, `"ab"`, `"x\ny"`, `"("`, `"é"`, `"\ufffd"`, `"x"`, `"y"`, `"z"`, `1`, `null`, `true`, `[]`, `{}`,
	`{"s": "low"}`, `{"s": "mid"}`, `{"s": "high", "q": "x"}`, `{"s": "high", "q": "w"}`, `{"s": "low", "p1": "y", "p2": 1}`,
	`{"s": "low", "enum": "x"}`, `{"enum": ["s"]}`, `["low", "high"]`, `["low"]`, `["low", "mid", "high"]`, `["a", "b", "b"]`,
	`["a", "c"]`, `{"x": "d", "y": 1}`, `{"x": "e"}`,
}

// TestQuickSchema_agrees: the quick schema accepts what the schema as
// written accepts, and only that.
func TestQuickSchema_agrees(t *testing.T) {
	quick := 0
	for _, src := range quickSchemas {
		s, err := CompileSchema([]byte(src))
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if s.quick == nil {
			continue
		}
		quick++
		for _, inst := range quickInstances {
			data, err := Decode("json", inst)
			if err != nil {
				t.Fatal(err)
			}
			if q, full := s.quick.Validate(data).IsValid(), s.s.Validate(data).IsValid(); q != full {
				t.Errorf("schema %s, instance %s: quick says valid=%v, the schema as written %v", src, inst, q, full)
			}
		}
	}
	if quick < 7 {
		t.Errorf("%d of the schemas have a quick schema, want 7", quick)
	}
}

func TestQuickSource(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{`{"enum": ["a", "b.c"], "title": "<&>", "minimum": 1.50}`, `{"minimum":1.50,"pattern":"^(?:a|b\\.c)$","title":"<&>","type":"string"}`},
		{`{"type": ["string", "null"], "enum": ["a"]}`, `{"pattern":"^(?:a)$","type":"string"}`},
		{`{"type": "integer", "enum": ["a"]}`, ``},
		{`{"enum": ["a", 1]}`, ``},
		{`{"pattern": "x", "enum": ["a"]}`, ``},
		{`{"enum": ["a\u00e9"]}`, ``}, // an escape might not read back the same way
		{`{"enum": ["a"], "enum": ["b"]}`, ``},
		{`{"const": {"enum": ["a"]}, "examples": [{"enum": ["b"]}], "x-custom": {"enum": ["c"]}}`, ``},
		{`{"properties": {"enum": {"type": "string"}}, "dependentRequired": {"enum": ["a"]}}`, ``},
	} {
		got := strings.TrimSpace(string(quickSource([]byte(tc.src))))
		if got != tc.want {
			t.Errorf("quickSource(%s) = %s, want %s", tc.src, got, tc.want)
		}
	}
}

// TestSchema_Validate_refusedByQuick: a document the quick schema refuses
// gets every violation the schema as written finds, worded by it.
func TestSchema_Validate_refusedByQuick(t *testing.T) {
	src := `{"type": "object", "required": ["findings"], "properties": {"findings": {"type": "array", "items": {
	  "type": "object", "required": ["severity"], "properties": {"severity": {"enum": ["low", "medium", "high"]},
	  "line": {"type": "integer", "minimum": 1}}}}}}`
	s, err := CompileSchema([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if s.quick == nil {
		t.Fatal("no quick schema")
	}
	data, err := Decode("json", `{"findings": [{"severity": "mid", "line": 0}, {"severity": 3}, {"line": 2}, {"severity": "low"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	want := []Violation{
		{"/findings/0/line", "0 should be at least 1"},
		{"/findings/0/severity", "Value mid should be one of the allowed values: low, medium, high"},
		{"/findings/1/severity", "Value 3 should be one of the allowed values: low, medium, high"},
		{"/findings/2", "Required property 'severity' is missing"},
	}
	if diff := cmp.Diff(want, s.Validate(data)); diff != "" {
		t.Errorf("Validate (-want +got):\n%s", diff)
	}
	written := &Schema{s: s.s}
	if diff := cmp.Diff(written.Validate(data), s.Validate(data)); diff != "" {
		t.Errorf("with the quick schema (-without +with):\n%s", diff)
	}
}

// FuzzQuickSchema holds the quick schemas to the schemas as written over
// any JSON instance.
func FuzzQuickSchema(f *testing.F) {
	for _, inst := range quickInstances {
		f.Add(inst)
	}
	var schemas []*Schema
	for _, src := range quickSchemas {
		s, err := CompileSchema([]byte(src))
		if err != nil {
			f.Fatal(err)
		}
		if s.quick != nil {
			schemas = append(schemas, s)
		}
	}
	f.Fuzz(func(t *testing.T, inst string) {
		data, err := Decode("json", inst)
		if err != nil {
			return
		}
		for _, s := range schemas {
			if q, full := s.quick.Validate(data).IsValid(), s.s.Validate(data).IsValid(); q != full {
				t.Fatalf("instance %s: quick says valid=%v, the schema as written %v", inst, q, full)
			}
		}
	})
}
