package outputspec

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func schemaOf(t *testing.T, text string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(text), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// A schema fits a strict subset only as it is written; each reason is one
// line naming where.
func TestContract_StrictFit(t *testing.T) {
	const closed = `{"type":"object","additionalProperties":false,"required":["a","tags"],"properties":{"a":{"type":"string"},"tags":{"type":"array","items":{"type":"string"}}}}`
	tests := []struct {
		name, schema      string
		openai, anthropic string // "" fits; else a part of the reason
	}{
		{"closed", closed, "", ""},
		{"optional", `{"type":"object","additionalProperties":false,"required":["a"],"properties":{"a":{"type":"string"},"tags":{"type":"array","items":{"type":"string"}}}}`,
			"`properties.tags` is optional", ""},
		{"open", `{"type":"object","required":["a"],"properties":{"a":{"type":"string"}}}`, "the top level is open", "the top level is open"},
		{"nested open", `{"type":"object","additionalProperties":false,"required":["m"],"properties":{"m":{"type":"object","properties":{}}}}`,
			"`properties.m` is open", "`properties.m` is open"},
		{"minLength", `{"type":"object","additionalProperties":false,"required":["a"],"properties":{"a":{"type":"string","minLength":1}}}`,
			"`properties.a` has minLength, which OpenAI's strict subset does not take", "`properties.a` has minLength, which Anthropic's"},
		{"minimum", `{"type":"object","additionalProperties":false,"required":["n"],"properties":{"n":{"type":"integer","minimum":1}}}`,
			"", "`properties.n` has minimum"},
		{"format uri", `{"type":"object","additionalProperties":false,"required":["u"],"properties":{"u":{"type":"string","format":"uri"}}}`,
			`has format "uri"`, ""},
		{"no type", `{"type":"object","additionalProperties":false,"required":["x"],"properties":{"x":{}}}`, "`properties.x` has no type", "`properties.x` has no type"},
		{"oneOf", `{"type":"object","additionalProperties":false,"required":["x"],"properties":{"x":{"oneOf":[{"type":"string"}]}}}`, "has oneOf", "has oneOf"},
		// The top level's $schema and $id are left out of what is sent.
		{"$schema", `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","additionalProperties":false,"properties":{}}`, "", ""},
		{"$id and annotations", `{"$id":"https://example.com/answer.json","title":"Answer","description":"d","type":"object","additionalProperties":false,"properties":{}}`, "", ""},
		{"draft-04", `{"$schema":"http://json-schema.org/draft-04/schema#","type":"object","additionalProperties":false,"properties":{}}`, "$schema is http://json-schema.org/draft-04/schema#", "draft-04"},
		{"nested $schema", `{"type":"object","additionalProperties":false,"required":["a"],"properties":{"a":{"$schema":"x","type":"string"}}}`, "`properties.a` has $schema", "`properties.a` has $schema"},
		{"nested $id", `{"type":"object","additionalProperties":false,"required":["a"],"properties":{"a":{"$id":"x","type":"string"}}}`, "has $id", "has $id"},
		{"defs", `{"type":"object","additionalProperties":false,"required":["i"],"properties":{"i":{"$ref":"#/$defs/item"}},"$defs":{"item":{"type":"object","additionalProperties":false,"required":["n"],"properties":{"n":{"type":"string"}}}}}`, "", ""},
		{"recursive", `{"type":"object","additionalProperties":false,"required":["root"],"properties":{"root":{"$ref":"#/$defs/node"}},"$defs":{"node":{"type":"object","additionalProperties":false,"required":["kids"],"properties":{"kids":{"type":"array","items":{"$ref":"#/$defs/node"}}}}}}`,
			"", "`$defs.node` is recursive"},
		{"minItems 2", `{"type":"object","additionalProperties":false,"required":["l"],"properties":{"l":{"type":"array","minItems":2,"items":{"type":"string"}}}}`,
			"", "minItems 2"},
		{"enum of objects", `{"type":"object","additionalProperties":false,"required":["e"],"properties":{"e":{"enum":[{"a":1}]}}}`, "", "enum of objects"},
		{"word boundary", `{"type":"object","additionalProperties":false,"required":["p"],"properties":{"p":{"type":"string","pattern":"\\bword"}}}`, "", "pattern with \\b"},
		{"array at the top", `{"type":"array","items":{"type":"string"}}`, "", ""},
	}
	for _, tt := range tests {
		c := mustCompile(t, Spec{Format: "json", Schema: schemaOf(t, tt.schema)})
		for _, fam := range []struct{ name, want string }{{StrictOpenAI, tt.openai}, {StrictAnthropic, tt.anthropic}} {
			got := c.fit(fam.name, false) // as written; projected.go's tests hold the projections
			if (fam.want == "") != (got == "") || !strings.Contains(got, fam.want) {
				t.Errorf("%s, %s: %q; want %q", tt.name, fam.name, got, fam.want)
			}
			if strings.Contains(got, "\n") {
				t.Errorf("%s: not one line: %q", tt.name, got)
			}
		}
	}
	// A reply format's root must be an object.
	c := mustCompile(t, Spec{Format: "json", Schema: schemaOf(t, `{"type":"array","items":{"type":"string"}}`)})
	if got := c.ReplyStrict(StrictOpenAI); !strings.Contains(got, "not an object") {
		t.Errorf("ReplyStrict of an array: %q", got)
	}
	if got := mustCompile(t, Spec{Format: "json", Schema: schemaOf(t, closed)}).ReplyStrict(StrictOpenAI); got != "" {
		t.Errorf("ReplyStrict: %q", got)
	}
	// No schema, a broken one, another format: never strict for content.
	for _, spec := range []Spec{{Format: "json"}, {Format: "json", Schema: map[string]any{"type": 12}}, {Format: "yaml", Schema: schemaOf(t, closed)}} {
		c := mustCompile(t, spec)
		if c.StrictFit(StrictOpenAI) == "" {
			t.Errorf("%+v fits", spec)
		}
	}
	// A string content (any format) is coda's own schema: always strict.
	if why := mustCompile(t, Spec{Format: "xml"}).ToolStrict(StrictOpenAI, ToolShape{}); why != "" {
		t.Errorf("xml: %q", why)
	}
	// A schema that cannot be nested as written is not typed with its
	// schema loose; strict, its projection (references as definitions) is.
	c = mustCompile(t, Spec{Format: "json", Schema: schemaOf(t, `{"type":"object","additionalProperties":false,"properties":{"n":{"anyOf":[{"$ref":"#"},{"type":"null"}]}},"required":["n"]}`)})
	if got := c.fit(StrictOpenAI, false); !strings.Contains(got, "cannot be nested") {
		t.Errorf("a root reference: %q", got)
	}
	if got := string(c.ToolSchemaShaped(ToolWays, ToolShape{Typed: true})); !strings.Contains(got, contentAnySchema) {
		t.Errorf("a root reference is nested: %s", got)
	}
	if got := string(c.ToolSchemaShaped(ToolWays, ToolShape{Typed: true, Strict: StrictOpenAI})); !strings.Contains(got, `"$defs":{"root":`) {
		t.Errorf("a root reference, projected: %s", got)
	}
}

// The strict forms coda writes of its own part fit their subsets (the
// fakes of the APIs hold them to it as well).
func TestToolSchema_strictFormsFit(t *testing.T) {
	c := mustCompile(t, Spec{Format: "json", Schema: schemaOf(t, `{"type":"object","additionalProperties":false,"required":["a"],"properties":{"a":{"type":"string"}}}`)})
	for _, fam := range []string{StrictOpenAI, StrictAnthropic} {
		for _, w := range []Ways{ToolWays, {Tool: true, Unavailable: true}} {
			var v any
			json.Unmarshal(c.ToolSchemaShaped(w, ToolShape{Typed: true, Strict: fam}), &v)
			if why := strictFit(v, fam, false); why != "" {
				t.Errorf("%s %+v: %s", fam, w, why)
			}
		}
	}
}

// A generated schema's $schema and $id (zod-to-json-schema writes the
// one, Pydantic and others the other) keep it from no strict subset: they
// are left out of what is sent, the reply's schema and submit_output's
// typed content, which accept the same values; coda's own check still
// runs the schema as written.
func TestContract_metaless(t *testing.T) {
	const generated = `{"$schema":"http://json-schema.org/draft-07/schema#","$id":"https://example.com/answer.json","type":"object",` +
		`"properties":{"items":{"type":"array","items":{"$ref":"#/definitions/item"}}},"required":["items"],"additionalProperties":false,` +
		`"definitions":{"item":{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"],"additionalProperties":false}}}`
	c := mustCompile(t, Spec{Format: "json", Schema: schemaOf(t, generated)})
	for _, fam := range []string{StrictOpenAI, StrictAnthropic} {
		if why := c.StrictFit(fam); why != "" {
			t.Errorf("%s: not strict: %s", fam, why)
		}
		if why := c.ReplyStrict(fam); why != "" {
			t.Errorf("%s: the reply not strict: %s", fam, why)
		}
		if why := c.ToolStrict(fam, ToolShape{Typed: true}); why != "" {
			t.Errorf("%s: submit_output not strict: %s", fam, why)
		}
		tool := c.ToolSchemaShaped(ToolWays, ToolShape{Typed: true, Strict: fam})
		var v any
		json.Unmarshal(tool, &v)
		if why := strictFit(v, fam, false); why != "" || !strings.Contains(string(tool), `"items":{"type":"array","items":{"$ref":"#/$defs/item"}}`) {
			t.Errorf("%s: submit_output %s (%s)", fam, tool, why)
		}
		if strings.Contains(string(tool), "$schema") || strings.Contains(string(tool), "$id") {
			t.Errorf("%s: submit_output keeps $schema or $id: %s", fam, tool)
		}
	}
	want := `{"type":"object","properties":{"items":{"type":"array","items":{"$ref":"#/definitions/item"}}},"required":["items"],"additionalProperties":false,` +
		`"definitions":{"item":{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"],"additionalProperties":false}}}`
	if got := c.ReplySchema(); !reflect.DeepEqual(schemaOf(t, string(got)), schemaOf(t, want)) {
		t.Errorf("the reply's schema\n%s\nwant\n%s", got, want)
	}
	// What is sent accepts what the schema as written accepts.
	sent, err := compileSchema(c.ReplySchema())
	if err != nil {
		t.Fatal(err)
	}
	for _, answer := range []string{`{"items":[{"n":1}]}`, `{"items":[{"n":"one"}]}`, `{"items":[{"n":1,"x":2}]}`, `{}`} {
		var data any
		json.Unmarshal([]byte(answer), &data)
		v := c.Check(context.Background(), Submission{Reply: answer})
		if v.Accepted != (len(sent.Validate(data)) == 0) {
			t.Errorf("%s: accepted %v by the schema as written, %v by the one sent", answer, v.Accepted, !v.Accepted)
		}
	}
	// Draft-04 reads otherwise: sent as written loose, strict as its
	// projection, which reads it.
	old := mustCompile(t, Spec{Format: "json", Schema: schemaOf(t, `{"$schema":"http://json-schema.org/draft-04/schema#","type":"object","properties":{"n":{"type":"number","maximum":3,"exclusiveMaximum":true}},"additionalProperties":false}`)})
	if !strings.Contains(string(old.ReplySchema()), "draft-04") || old.ReplyStrict(StrictOpenAI) != "" {
		t.Errorf("draft-04: %s, %q", old.ReplySchema(), old.ReplyStrict(StrictOpenAI))
	}
	if got := string(old.ReplySchemaFor(StrictOpenAI)); got != `{"type":"object","properties":{"n":{"anyOf":[{"type":"number","exclusiveMaximum":3},{"type":"null"}]}},"required":["n"],"additionalProperties":false}` {
		t.Errorf("draft-04 projected: %s", got)
	}
}
