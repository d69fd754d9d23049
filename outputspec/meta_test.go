package outputspec

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseMeta(t *testing.T) {
	tests := []struct {
		raw     string
		want    Spec
		wantErr string
	}{
		{raw: ``, want: Spec{}},
		{raw: `null`, want: Spec{}},
		{
			raw: `{"format":"json","instructions":"i","example":"{}","schema":{"type":"object","maxProperties":3},` +
				`"validator":"v.star","onValidatorError":"accept","artifacts":[{"name":"r","type":"text/markdown","required":true}],` +
				`"overwriteArtifacts":true}`,
			want: Spec{Format: "json", Instructions: "i", Example: "{}",
				Schema:    map[string]any{"type": "object", "maxProperties": json.Number("3")},
				Validator: "v.star", OnValidatorError: "accept",
				Artifacts:          []ArtifactDecl{{Name: "r", Type: "text/markdown", Required: true}},
				OverwriteArtifacts: ptr(true)},
		},
		{raw: `{"schemaFile":"s.json"}`, want: Spec{SchemaFile: "s.json"}},
		{raw: `{"assertFormat":false}`, want: Spec{AssertFormat: ptr(false)}},
		{raw: `{"assert_format":false}`, wantErr: `unknown field "assert_format"`},
		{raw: `{"assertFormat":"no"}`, wantErr: `field "assertFormat" must be a boolean`},
		{raw: `{"format":"json","shema":{}}`, wantErr: `_meta.coda.output: unknown field "shema"`},
		{raw: `{"artifacts":[{"name":"a","kind":"x"}]}`, wantErr: `_meta.coda.output: unknown field "kind"`},
		{raw: `{"schema_file":"s.json"}`, wantErr: `unknown field "schema_file"`},
		{raw: `{"format":3}`, wantErr: `_meta.coda.output: field "format" must be a string`},
		{raw: `{"artifacts":{}}`, wantErr: `field "artifacts" must be an array`},
		{raw: `{"schema":"{}"}`, wantErr: `_meta.coda.output: schema must be an object (a JSON Schema), not a string`},
		{raw: `{"onValidatorError":"warn"}`, wantErr: `_meta.coda.output: on_validator_error is "warn"`},
		{raw: `"json"`, wantErr: `_meta.coda.output must be an object`},
	}
	for _, tt := range tests {
		got, err := ParseMeta(json.RawMessage(tt.raw))
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseMeta(%s): error %v, want %q", tt.raw, err, tt.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), "\n") {
				t.Errorf("ParseMeta(%s): error spans lines: %q", tt.raw, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseMeta(%s): %v", tt.raw, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ParseMeta(%s) (-want +got):\n%s", tt.raw, diff)
		}
	}
}

func TestLaunch(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	example := write("example.json", `{"ok": true}`)
	schema := write("schema.json", "{\n  \"type\": \"object\"\n}\n")
	badSchema := write("bad.json", "{\n  \"type\": \"object\",\n  \"required\": [\"a\",]\n}\n")
	arraySchema := write("array.json", `[]`)
	trailing := write("trailing.json", "{}\n{}")

	t.Run("flags", func(t *testing.T) {
		got, err := Launch("XML", "One <finding> per issue.", "@"+example, "@"+schema, "v.star", nil)
		if err != nil {
			t.Fatal(err)
		}
		wd, _ := os.Getwd()
		want := Spec{Format: "XML", Instructions: "One <finding> per issue.", Example: `{"ok": true}`,
			SchemaFile: schema, Validator: filepath.Join(wd, "v.star")}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("inline schema and example text", func(t *testing.T) {
		got, err := Launch("json", "", "{}", `{"type":"array","minItems":1}`, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		want := Spec{Format: "json", Example: "{}", Schema: map[string]any{"type": "array", "minItems": json.Number("1")}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("empty flags are unset", func(t *testing.T) {
		got, err := Launch("", "", "", "", "", nil)
		if err != nil || !cmp.Equal(got, Spec{}) {
			t.Errorf("got %+v, %v", got, err)
		}
	})

	errs := []struct {
		name                                 string
		format, instr, ex, schema, validator string
		want                                 string
	}{
		{"missing example file", "", "", "@" + filepath.Join(dir, "nope.md"), "", "", "--output-example: " + filepath.Join(dir, "nope.md") + ": no such file"},
		{"missing schema file", "", "", "", "@" + filepath.Join(dir, "nope.json"), "", "--output-schema: " + filepath.Join(dir, "nope.json") + ": no such file"},
		{"unparseable schema file names file and line", "", "", "", "@" + badSchema, "", "--output-schema: " + badSchema + ":3:20: invalid character ']' looking for beginning of value"},
		{"inline unparseable", "", "", "", `{"type": }`, "", "--output-schema: 1:10: invalid character '}' looking for beginning of value"},
		{"inline truncated", "", "", "", `{"type": "object"`, "", "--output-schema: 1:18: unexpected end of JSON input"},
		{"not an object", "", "", "", "@" + arraySchema, "", "--output-schema: " + arraySchema + ":1:1: a JSON Schema must be an object, not an array"},
		{"text after the value", "", "", "", "@" + trailing, "", "--output-schema: " + trailing + ":2:1: text after the schema's JSON value"},
	}
	for _, tt := range errs {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Launch(tt.format, tt.instr, tt.ex, tt.schema, tt.validator, nil)
			if err == nil || err.Error() != tt.want {
				t.Errorf("error %v\nwant  %s", err, tt.want)
			}
		})
	}
}
