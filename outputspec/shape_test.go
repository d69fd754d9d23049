package outputspec

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// A strict-fitting schema: every object closed, every property required.
var closedSchema = map[string]any{
	"type": "object", "additionalProperties": false, "required": []any{"safe", "issues"},
	"properties": map[string]any{
		"safe":   map[string]any{"type": "boolean"},
		"issues": map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
	},
}

// submit_output's schema as each shape writes it, golden: typed content is
// the answer's schema (its definitions hoisted), any JSON value without
// one; the strict subsets' own forms of coda's part.
func TestContract_ToolSchemaShaped(t *testing.T) {
	withDefs := map[string]any{
		"$schema": "https://json-schema.org/draft/2020-12/schema",
		"type":    "object", "additionalProperties": false, "required": []any{"items"},
		"properties": map[string]any{"items": map[string]any{"type": "array", "items": map[string]any{"$ref": "#/$defs/item"}}},
		"$defs":      map[string]any{"item": map[string]any{"type": "string"}},
	}
	tests := []struct {
		name  string
		spec  Spec
		w     Ways
		shape ToolShape
	}{
		{"typed", Spec{Format: "json", Schema: closedSchema}, ToolWays, ToolShape{Typed: true}},
		{"typed_openai_unavailable", Spec{Format: "json", Schema: closedSchema}, Ways{Tool: true, Unavailable: true}, ToolShape{Typed: true, Strict: StrictOpenAI}},
		{"typed_anthropic", Spec{Format: "json", Schema: closedSchema}, ToolWays, ToolShape{Typed: true, Strict: StrictAnthropic}},
		{"typed_defs", Spec{Format: "json", Schema: withDefs}, ToolWays, ToolShape{Typed: true}},
		{"typed_any", Spec{Format: "json"}, ToolWays, ToolShape{Typed: true}},
		{"xml_openai", Spec{Format: "xml"}, ToolWays, ToolShape{Typed: true, Strict: StrictOpenAI}},
	}
	var b strings.Builder
	for _, tt := range tests {
		c := mustCompile(t, tt.spec)
		got := c.ToolSchemaShaped(tt.w, tt.shape)
		schema, err := compileSchema(got)
		if err != nil {
			t.Errorf("%s: the schema does not compile: %v\n%s", tt.name, err, got)
		}
		_ = schema
		var ind bytes.Buffer
		if err := json.Indent(&ind, got, "", "  "); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		b.WriteString("== " + tt.name + "\n" + ind.String() + "\n")
	}
	golden(t, "tool_schema_shaped", b.String())
}

// A typed content is the answer's own bytes, compacted; a string holding
// the JSON is still taken (models that stringify), unless the schema names
// a string at its top; other formats keep a string.
func TestContract_Check_typed(t *testing.T) {
	obj := mustCompile(t, Spec{Format: "json", Schema: closedSchema})
	str := mustCompile(t, Spec{Format: "json", Schema: map[string]any{"type": []any{"string", "object"}}})
	anyJSON := mustCompile(t, Spec{Format: "json"})
	xml := mustCompile(t, Spec{Format: "xml"})
	tests := []struct {
		name     string
		c        *Contract
		args     string
		accepted bool
		want     string // the answer, or a part of the refusal
	}{
		{"value", obj, `{"content": {"safe": true, "issues": ["a"]}}`, true, `{"safe":true,"issues":["a"]}`},
		{"stringified", obj, `{"content": "{\"safe\": true, \"issues\": []}"}`, true, `{"safe": true, "issues": []}`},
		{"value refused by the schema", obj, `{"content": {"safe": true}}`, false, "does not satisfy the JSON Schema"},
		{"stringified broken", obj, "{\"content\": \"```json\\n{}\\n```\"}", false, "not well-formed JSON"},
		{"string at the top", str, `{"content": "hello"}`, true, `"hello"`},
		{"object where a string may be", str, `{"content": {"a": 1}}`, true, `{"a":1}`},
		{"any JSON", anyJSON, `{"content": [1, 2]}`, true, `[1,2]`},
		{"any JSON, stringified", anyJSON, `{"content": "[1, 2]"}`, true, `[1, 2]`},
		{"a number", anyJSON, `{"content": 3}`, true, `3`},
		{"missing", obj, `{}`, false, `"content" is missing: submit_output takes {"content": <the answer, as JSON>`},
		{"xml keeps a string", xml, `{"content": {"a": 1}}`, false, `"content" must be a string`},
		{"unavailable beside a value", obj, `{"content": {"safe": true}, "unavailable": "no file"}`, false, "not both"},
	}
	for _, tt := range tests {
		v := tt.c.Check(context.Background(), Submission{Args: json.RawMessage(tt.args), Typed: true})
		got := v.Feedback
		if v.Accepted {
			got = v.Content
		}
		if v.Accepted != tt.accepted || (tt.accepted && got != tt.want) || (!tt.accepted && !strings.Contains(got, tt.want)) {
			t.Errorf("%s: accepted %v, %q; want %v, %q", tt.name, v.Accepted, got, tt.accepted, tt.want)
		}
	}
	// Not typed (the prompted schema): a value is refused, as the schema
	// offered says.
	v := obj.Check(context.Background(), Submission{Args: json.RawMessage(`{"content": {"safe": true, "issues": []}}`)})
	if v.Accepted || !strings.Contains(v.Feedback, `"content" must be a string`) {
		t.Errorf("untyped call with a value: %v %q", v.Accepted, v.Feedback)
	}
	// An accepted typed answer's data is its bytes.
	v = obj.Check(context.Background(), Submission{Args: json.RawMessage(`{"content":{"safe":false,"issues":[]}}`), Typed: true})
	if string(v.Data) != `{"safe":false,"issues":[]}` {
		t.Errorf("data %s", v.Data)
	}
}

// The typed schemas agree with parseArgs and the answer's schema together:
// whatever the tool's schema takes, the check takes.
func TestContract_ToolSchemaShaped_agreesWithCheck(t *testing.T) {
	c := mustCompile(t, Spec{Format: "json", Schema: closedSchema})
	for _, shape := range []ToolShape{{Typed: true}, {Typed: true, Strict: StrictOpenAI}, {Typed: true, Strict: StrictAnthropic}} {
		for _, w := range []Ways{ToolWays, {Tool: true, Unavailable: true}} {
			schema, err := compileSchema(c.ToolSchemaShaped(w, shape))
			if err != nil {
				t.Fatal(err)
			}
			for _, args := range []string{
				`{"content": {"safe": true, "issues": []}, "artifacts": null}`,
				`{"content": {"safe": true, "issues": []}, "artifacts": [{"path": "a", "name": null, "type": null}]}`,
				`{"content": {"safe": true}}`,
				`{"content": {"safe": true, "issues": [], "x": 1}}`,
				`{"content": null, "artifacts": null, "unavailable": "no data"}`,
			} {
				var data any
				json.Unmarshal([]byte(args), &data)
				bySchema := schema.Validate(data) == nil
				// What a decoder held to the schema writes, the check
				// takes: the strict forms' nulls are absent members to it.
				a, problem := parseArgsAs(json.RawMessage(args), c.contentRule(Submission{Typed: true}))
				if problem == "" && a.unavailable == "" {
					var answer any
					json.Unmarshal([]byte(a.content), &answer)
					if vs := c.schema.Validate(answer); len(vs) > 0 {
						problem = "the answer's schema refuses it"
					}
				}
				if bySchema && problem != "" {
					t.Errorf("%+v %+v %s: the schema takes it, the check refuses: %q", shape, w, args, problem)
				}
			}
		}
	}
}

func TestSpec_Structured(t *testing.T) {
	if err := (Spec{Structured: "strict"}).Validate(); err == nil || !strings.Contains(err.Error(), `structured is "strict": want "auto", "tool", "native" or "prompted"`) {
		t.Errorf("Validate: %v", err)
	}
	for _, m := range StructuredModes {
		if err := (Spec{Structured: m}).Validate(); err != nil {
			t.Errorf("%s: %v", m, err)
		}
	}
	// The later level wins; a format change retires nothing of it.
	got, _ := Resolve(Levels{
		Agent:  &Level{Spec: Spec{Format: "json", Structured: StructuredPrompted}},
		Launch: &Level{Spec: Spec{Format: "xml"}},
	})
	if got.Structured != StructuredPrompted {
		t.Errorf("resolved structured %q", got.Structured)
	}
	got, _ = Resolve(Levels{Agent: &Level{Spec: Spec{Structured: StructuredPrompted}}, Stage: &Level{Spec: Spec{Structured: StructuredNative}}})
	if got.Structured != StructuredNative {
		t.Errorf("resolved structured %q", got.Structured)
	}
}

func TestContract_ReplySchema(t *testing.T) {
	c := mustCompile(t, Spec{Format: "json", SchemaFile: testdata("schemas/findings.json")})
	var v any
	if err := json.Unmarshal(c.ReplySchema(), &v); err != nil || bytes.ContainsAny(c.ReplySchema(), "\n ") {
		t.Errorf("reply schema %s: %v", c.ReplySchema(), err)
	}
	if mustCompile(t, Spec{Format: "json"}).ReplySchema() != nil || mustCompile(t, Spec{Format: "yaml", Schema: closedSchema}).ReplySchema() != nil {
		t.Error("a reply schema without a json schema")
	}
}

func TestContract_StringTop(t *testing.T) {
	for _, tt := range []struct {
		schema map[string]any
		want   bool
	}{
		{map[string]any{"type": "string"}, true},
		{map[string]any{"enum": []any{"a", 1}}, true},
		{map[string]any{"anyOf": []any{map[string]any{"type": "object"}, map[string]any{"const": "none"}}}, true},
		{map[string]any{"type": "object"}, false},
		{map[string]any{"required": []any{"a"}}, false}, // no type named: an object was meant
	} {
		if got := mustCompile(t, Spec{Format: "json", Schema: tt.schema}).StringTop(); got != tt.want {
			t.Errorf("%v: %v", tt.schema, got)
		}
	}
}
