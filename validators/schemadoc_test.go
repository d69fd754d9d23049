package validators

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// checkSchema compiles schema with opts and checks each answer: want is ""
// for an accepted answer, or a piece of the violations' text.
func checkSchema(t *testing.T, schema string, opts SchemaOptions, answers map[string]string) {
	t.Helper()
	s, err := CompileSchemaWith([]byte(schema), opts)
	if err != nil {
		t.Fatalf("CompileSchemaWith(%s): %v", schema, err)
	}
	for answer, want := range answers {
		data, err := Decode("json", answer)
		if err != nil {
			t.Fatal(err)
		}
		got := FormatViolations(s.Validate(data), 0)
		switch {
		case want == "" && got != "":
			t.Errorf("%s against %s: refused (%s), want accepted", answer, schema, got)
		case want != "" && !strings.Contains(got, want):
			t.Errorf("%s against %s: got %q, want a violation containing %q", answer, schema, got, want)
		}
	}
}

// Keywords coda does not know are annotations wherever they sit: a "type"
// inside them is data (the jsonschemabench schemas that coda's lint refused).
func TestCompileSchema_ExtensionKeywords(t *testing.T) {
	for _, s := range []string{
		`{"properties": {"email": {"type": "string", "attrs": {"type": "email"}}}}`,
		`{"properties": {"d": {"type": "string", "x-prompt": {"type": "list", "items": [{"type": "x"}]}}}}`,
		`{"properties": {"id": {"type": "string", "pbj": {"type": "identifier"}}}}`,
		`{"definitions": {"p": {"oneOf": [{"type": "string"}, {"exists": {"type": "isDirectory"}}]}}}`,
		`{"x-schema-form": {"type": "fieldset"}, "form": [{"type": "help"}], "examples": [{"type": "t"}], "default": {"type": "d"}}`,
	} {
		if _, err := CompileSchema([]byte(s)); err != nil {
			t.Errorf("CompileSchema(%s): %v", s, err)
		}
	}
	// ... and still checked where it is a keyword, in any applicator.
	for _, s := range []string{
		`{"type": "strng"}`,
		`{"properties": {"a": {"type": ["string", "nul"]}}}`,
		`{"items": [{"type": "x"}]}`,
		`{"dependencies": {"a": {"type": "x"}}}`,
		`{"$defs": {"a": {"not": {"type": "x"}}}}`,
	} {
		if _, err := CompileSchema([]byte(s)); err == nil || !strings.Contains(err.Error(), "is not a JSON type") {
			t.Errorf("CompileSchema(%s) = %v, want a type error", s, err)
		}
	}
}

// A local $ref resolves to any JSON Pointer in the document.
func TestCompileSchema_RefAnyPointer(t *testing.T) {
	checkSchema(t, `{"properties": {"p": {"$ref": "#/port"}}, "port": {"type": "integer", "maximum": 65535}}`, SchemaOptions{},
		map[string]string{`{"p": 80}`: "", `{"p": 70000}`: "/p: 70000 should be at most 65535", `{"p": "80"}`: "/p: Value is string but should be integer"})
	// Through unknown keywords, to a schema that refers on, and back to itself.
	checkSchema(t, `{"$ref": "#/components/schemas/Node",
	  "components": {"schemas": {
	    "Node": {"type": "object", "properties": {"v": {"$ref": "#/components/schemas/Value"}, "next": {"$ref": "#/components/schemas/Node"}}},
	    "Value": {"type": "string", "pattern": "^(?!bad)"}}}}`, SchemaOptions{},
		map[string]string{`{"v": "ok", "next": {"v": "fine"}}`: "", `{"next": {"next": {"v": "bad"}}}`: "/next/next/v: Value does not match the required pattern ^(?!bad)"})
	// Draft 4's definitions, and both $defs and definitions in one document.
	checkSchema(t, `{"$schema": "http://json-schema.org/draft-04/schema#", "definitions": {"a": {"type": "string"}},
	  "resourceDefinitions": {"r": {"properties": {"x": {"$ref": "#/definitions/a"}}}}, "$ref": "#/resourceDefinitions/r"}`, SchemaOptions{},
		map[string]string{`{"x": "s"}`: "", `{"x": 1}`: "/x: Value is integer but should be string"})
	checkSchema(t, `{"$defs": {"a": {"type": "string"}}, "definitions": {"b": {"type": "integer"}},
	  "properties": {"x": {"$ref": "#/$defs/a"}, "y": {"$ref": "#/definitions/b"}}}`, SchemaOptions{},
		map[string]string{`{"x": "s", "y": 1}`: "", `{"y": "s"}`: "/y: Value is string but should be integer"})
	// A copy's name never takes one the document uses.
	checkSchema(t, `{"$defs": {"coda-ref-1": {"type": "null"}, "coda-ref-3": {"type": "null"}},
	  "properties": {"a": {"$ref": "#/x/a"}, "b": {"$ref": "#/x/b"}, "c": {"$ref": "#/x/c"}, "n": {"$ref": "#/$defs/coda-ref-1"}},
	  "x": {"a": {"type": "string"}, "b": {"type": "integer"}, "c": {"type": "boolean"}}}`, SchemaOptions{},
		map[string]string{`{"a": "s", "b": 1, "c": true, "n": null}`: "", `{"a": 1}`: "/a: Value is integer but should be string",
			`{"b": "s"}`: "/b: Value is string but should be integer", `{"c": null}`: "/c: Value is null but should be boolean",
			`{"n": 0}`: "/n: Value is integer but should be null"})
	// A pointer to nothing, or to data, still does not resolve.
	for _, s := range []string{`{"$ref": "#/nowhere"}`, `{"$ref": "#/x/0", "x": [3]}`} {
		if _, err := CompileSchema([]byte(s)); err == nil || !strings.Contains(err.Error(), "does not resolve") {
			t.Errorf("CompileSchema(%s) = %v, want an unresolved $ref", s, err)
		}
	}
}

// An ECMA-262 pattern Go's regexp cannot compile is checked by regexp2.
func TestCompileSchema_ECMAPattern(t *testing.T) {
	checkSchema(t, `{"properties": {
	    "name": {"type": "string", "pattern": "^(?!lucene\\.|builtin\\.).*"},
	    "pair": {"pattern": "^(\\w)\\1$", "allOf": [{"minLength": 2}]},
	    "go": {"pattern": "^[a-z]+$"}}}`, SchemaOptions{},
		map[string]string{
			`{"name": "mine", "pair": "aa", "go": "abc"}`: "",
			`{"name": "lucene.x"}`:                        "/name: Value does not match the required pattern ^(?!lucene\\.|builtin\\.).*",
			`{"pair": "ab"}`:                              "/pair: Value does not match the required pattern ^(\\w)\\1$",
			`{"pair": "a"}`:                               "/pair: Value should be at least 2 characters",
			`{"go": "ABC"}`:                               "/go: Value does not match the required pattern ^[a-z]+$",
			`{"name": 5}`:                                 "Value is integer but should be string",
		})
	// patternProperties names too, with the additionalProperties that
	// depend on them, beside names Go's regexp compiles.
	checkSchema(t, `{"type": "object", "properties": {"ID": {"type": "integer"}, "ab": {"minLength": 1}},
	  "patternProperties": {"^(?!x-)[a-z]+$": {"type": "string"}, "^x-": {"type": "boolean"}, "^(\\d)\\1$": {"$ref": "#/$defs/n"}},
	  "additionalProperties": {"type": "null"},
	  "$defs": {"n": {"type": "number"}}}`, SchemaOptions{},
		map[string]string{
			`{"ID": 1, "name": "s", "x-y": true, "11": 2.5, "X": null}`: "",
			`{"ab": 1}`:    "/ab: Value is integer but should be string", // a name in properties is matched too
			`{"name": 1}`:  "/name: Value is integer but should be string",
			`{"x-y": "s"}`: "/x-y: Value is string but should be boolean",
			`{"22": "s"}`:  "/22: Value is string but should be number",
			`{"12": "s"}`:  "/12: Value is string but should be null",
			`{"ID": "s"}`:  "/ID: Value is string but should be integer",
		})
	checkSchema(t, `{"properties": {"o": {"patternProperties": {"^(?=a)": {"minLength": 2}}, "additionalProperties": false}}}`, SchemaOptions{},
		map[string]string{`{"o": {"ab": "xy"}}`: "", `{"o": {"ab": "x"}}`: "/o/ab: Value should be at least 2 characters",
			`{"o": {"b": "xy"}}`: `/o/b: property "b" is not allowed here`, `{"o": 5}`: ""})
	// A pattern is checked with format assertion off too.
	checkSchema(t, `{"pattern": "^(?!x)"}`, SchemaOptions{NoFormatAssertion: true},
		map[string]string{`"y"`: "", `"x"`: "does not match the required pattern"})
}

// {"enum": []} accepts nothing; the content vocabulary is an annotation.
func TestCompileSchema_EnumAndContent(t *testing.T) {
	checkSchema(t, `{"properties": {"e": {"enum": []}, "f": {"enum": [], "allOf": [{"type": "string"}]}}}`, SchemaOptions{},
		map[string]string{`{}`: "", `{"e": null}`: "/e: no value is allowed here", `{"f": "s"}`: "/f: no value is allowed here"})
	checkSchema(t, `{"properties": {"c": {"type": "string", "contentEncoding": "base64", "contentMediaType": "application/json",
	    "contentSchema": {"type": "object", "required": ["x"]}}}}`, SchemaOptions{},
		map[string]string{`{"c": "not base64 %"}`: "", `{"c": "e30="}`: "", `{"c": 1}`: "Value is integer but should be string"})
}

// A $ref to a draft's metaschema resolves offline (TestCompileSchema_NoNetwork
// holds that nothing is fetched).
func TestCompileSchema_Metaschemas(t *testing.T) {
	for uri, bad := range map[string]string{
		"https://json-schema.org/draft/2020-12/schema": `{"minLength": -1}`,
		"https://json-schema.org/draft/2019-09/schema": `{"type": "strng"}`,
		"http://json-schema.org/draft-07/schema#":      `{"required": "a"}`,
		"http://json-schema.org/draft-06/schema#":      `{"minItems": 1.5}`,
		"http://json-schema.org/draft-04/schema#":      `{"enum": []}`,
	} {
		checkSchema(t, `{"properties": {"schema": {"$ref": "`+uri+`"}}}`, SchemaOptions{},
			map[string]string{`{"schema": {"type": "string", "minLength": 1}}`: "", `{"schema": ` + bad + `}`: "/schema"})
	}
}

// format is asserted for the formats the providers' strict modes know,
// and only for them, unless the spec says assert_format = false.
func TestCompileSchema_Format(t *testing.T) {
	schema := `{"properties": {"e": {"format": "email"}, "d": {"format": "date-time"}, "u": {"format": "uri"},
	  "h": {"format": "hostname"}, "i": {"format": "ipv4"}, "id": {"format": "uuid"}, "r": {"format": "regex"}, "z": {"format": "zip-code"}}}`
	good := `{"e": "a@example.com", "d": "2026-12-06T01:02:03Z", "u": "https://example.com/a?b#c", "h": "xn--9n2bp8q.example",
	  "i": "192.168.0.1", "id": "2eb8aa08-aa98-11ea-b4aa-73b441d16380", "r": "(", "z": "anything"}`
	checkSchema(t, schema, SchemaOptions{}, map[string]string{
		good:                    "",
		`{"e": "not an email"}`: "/e: Value does not match format 'email'",
		`{"d": "yesterday"}`:    "/d: Value does not match format 'date-time'",
		`{"u": "/relative"}`:    "/u: Value does not match format 'uri'",
		`{"h": "example."}`:     "/h: Value does not match format 'hostname'",
		`{"i": "01.2.3.4"}`:     "/i: Value does not match format 'ipv4'",
		`{"id": "2eb8aa08"}`:    "/id: Value does not match format 'uuid'",
		`{"e": 5}`:              "",
	})
	checkSchema(t, schema, SchemaOptions{NoFormatAssertion: true}, map[string]string{
		`{"e": "not an email", "d": "yesterday", "u": "/relative", "h": "example.", "i": "x", "id": "y"}`: "",
	})
	if diff := cmp.Diff([]string{"date-time", "date", "time", "duration", "email", "hostname", "ipv4", "ipv6", "uuid", "uri"}, AssertedFormats()); diff != "" {
		t.Errorf("AssertedFormats (-want +got):\n%s", diff)
	}
	for _, f := range AssertedFormats() {
		if assertedFormats[f] == nil {
			t.Errorf("%s is listed but has no check", f)
		}
	}
}

// FuzzCompileSchema: any document compiles or is refused with one line,
// and a compiled schema checks any answer without panicking.
func FuzzCompileSchema(f *testing.F) {
	for _, s := range []string{
		`{"properties": {"p": {"$ref": "#/port"}}, "port": {"type": "integer"}}`,
		`{"$ref": "#/a/b", "a": {"b": {"$ref": "#/a/b"}}}`,
		`{"pattern": "^(?!x)", "enum": [], "x-form": {"type": "w"}}`,
		`{"items": [{"$ref": "#/items/0"}], "dependencies": {"a": ["b"]}}`,
		`{"$defs": {"coda-ref-1": true}, "properties": {"a": {"$ref": "#/z/0"}}, "z": [{"format": "email"}]}`,
		`{"$ref": "https://json-schema.org/draft/2020-12/schema"}`,
		`{"patternProperties": {"^(?!x)": {"$ref": "#"}, "^y": {}}, "additionalProperties": {"enum": []}}`,
	} {
		f.Add(s, `{"p": 1, "a": "x@y.z"}`)
	}
	f.Fuzz(func(t *testing.T, schema, answer string) {
		s, err := CompileSchema([]byte(schema))
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("the error spans lines: %q", err)
			}
			return
		}
		if data, err := Decode("json", answer); err == nil {
			s.Validate(data)
		}
	})
}
