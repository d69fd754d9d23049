package outputspec

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A caller's schema or validator that does not compile is refused, naming
// the field and the problem; one that compiles passes, whatever the format
// (a schema for XML is still the caller's to fix when broken).
func TestCheckCaller(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return name
	}
	tests := []struct {
		name  string
		spec  Spec
		field string // "" when it passes
		want  string
	}{
		{"good schema", Spec{Format: "json", Schema: map[string]any{"type": "object"}}, "", ""},
		{"objekt", Spec{Format: "json", Schema: map[string]any{"type": "objekt"}}, "schema", "objekt"},
		{"objekt under xml", Spec{Format: "xml", Schema: map[string]any{"type": "objekt"}}, "schema", "objekt"},
		{"unresolved ref", Spec{Format: "json", Schema: map[string]any{"$ref": "#/$defs/missing"}}, "schema", "does not resolve"},
		{"remote ref", Spec{Format: "json", Schema: map[string]any{"$ref": "https://example.com/s.json"}}, "schema", `the schema's $ref "https://example.com/s.json" does not resolve (schemas are never fetched`},
		{"remote ref in a file", Spec{Format: "json", SchemaFile: write("remote.json", `{"items": {"$ref": "http://localhost:1234/integer.json"}}`)}, "schemaFile", "never fetched"},
		{"a metaschema is no remote ref", Spec{Format: "json", Schema: map[string]any{"$ref": "https://json-schema.org/draft/2020-12/schema"}}, "", ""},
		{"schema file", Spec{Format: "json", SchemaFile: write("bad.json", `{"type": "objekt"}`)}, "schemaFile", "bad.json"},
		{"missing schema file", Spec{Format: "json", SchemaFile: "none.json"}, "schemaFile", "no such file"},
		{"good file", Spec{Format: "json", SchemaFile: write("good.json", `{"type": "object"}`)}, "", ""},
		{"validator", Spec{Validator: write("v.star", "def validate(content):\n  return None\n")}, "", ""},
		{"broken validator", Spec{Validator: write("broken.star", "def validate(:\n")}, "validator", "broken.star"},
		{"no checks", Spec{Format: "json", Instructions: "Be brief."}, "", ""},
	}
	for _, tt := range tests {
		err := CheckCaller(Level{Dir: dir, Spec: tt.spec})
		var ce *CallerError
		switch {
		case tt.field == "" && err != nil:
			t.Errorf("%s: %v, want it to pass", tt.name, err)
		case tt.field == "":
		case !errors.As(err, &ce):
			t.Errorf("%s: %v, want a CallerError on %s", tt.name, err, tt.field)
		case ce.Field != tt.field || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n"):
			t.Errorf("%s: %s: %q, want %s naming %q, one line", tt.name, ce.Field, err, tt.field, tt.want)
		}
	}
}
