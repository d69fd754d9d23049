package projection

import (
	"strings"
	"testing"
)

// Each rule of the projection, on a small schema: what is sent.
func TestProject(t *testing.T) {
	for _, tt := range []struct {
		name, family, schema, want string
		reply                      bool
	}{
		{"optional made nullable", OpenAI,
			`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}},"required":["a"]}`,
			`{"type":"object","properties":{"a":{"type":"string"},"b":{"anyOf":[{"type":"integer"},{"type":"null"}]}},"required":["a","b"],"additionalProperties":false}`, false},
		{"optional kept optional", Anthropic,
			`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}},"required":["a"]}`,
			`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}},"required":["a"],"additionalProperties":false}`, false},
		{"null already taken", OpenAI,
			`{"type":"object","properties":{"a":{"type":["string","null"]}}}`,
			`{"type":"object","properties":{"a":{"type":["string","null"]}},"required":["a"],"additionalProperties":false}`, false},
		{"draft-04", OpenAI,
			`{"$schema":"http://json-schema.org/draft-04/schema#","id":"x","type":"object","properties":{"n":{"$ref":"#/definitions/n"}},"required":["n"],"definitions":{"n":{"type":"number","minimum":0,"exclusiveMinimum":true}}}`,
			`{"type":"object","properties":{"n":{"$ref":"#/$defs/n"}},"required":["n"],"additionalProperties":false,"$defs":{"n":{"type":"number","exclusiveMinimum":0}}}`, false},
		{"oneOf as anyOf", OpenAI,
			`{"oneOf":[{"type":"string"},{"type":"integer"}]}`,
			`{"anyOf":[{"type":"string"},{"type":"integer"}],"description":"Also: exactly one of the alternatives."}`, false},
		{"allOf merged", OpenAI,
			`{"allOf":[{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]},{"properties":{"b":{"type":"boolean"}},"required":["b"]}]}`,
			`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"boolean"}},"required":["a","b"],"additionalProperties":false}`, false},
		{"dropped and said", Anthropic,
			`{"type":"object","properties":{"s":{"type":"string","description":"A name.","minLength":2}},"required":["s"]}`,
			`{"type":"object","properties":{"s":{"type":"string","description":"A name. Also: minLength 2."}},"required":["s"],"additionalProperties":false}`, false},
		{"an open map as pairs", OpenAI,
			`{"type":"object","additionalProperties":{"type":"integer"}}`,
			`{"type":"array","items":{"type":"object","properties":{"key":{"type":"string"},"value":{"type":"integer"}},"required":["key","value"],"additionalProperties":false},"description":"Also: the members as {key, value} pairs, each key once."}`, false},
		{"any value as JSON text", Anthropic,
			`{"type":"object","properties":{"x":{}},"required":["x"]}`,
			`{"type":"object","properties":{"x":{"type":"string","description":"Any JSON value, written as JSON text in this string."}},"required":["x"],"additionalProperties":false}`, false},
		{"a reply's root reference", OpenAI,
			`{"$ref":"#/definitions/r","definitions":{"r":{"type":"object","properties":{}}}}`,
			`{"type":"object","properties":{},"required":[],"additionalProperties":false,"$defs":{"r":{"type":"object","properties":{},"required":[],"additionalProperties":false}}}`, true},
	} {
		p, why := Project([]byte(tt.schema), tt.family, tt.reply, Budget{})
		if why != "" {
			t.Errorf("%s: %s", tt.name, why)
			continue
		}
		if string(p.Schema) != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, p.Schema, tt.want)
		}
	}
}

// Where no faithful projection exists, Project says why.
func TestProject_none(t *testing.T) {
	for _, tt := range []struct{ family, schema, want string }{
		{OpenAI, `{"type":"object","properties":{"b":{}},"required":["a"]}`, `requires "a"`},
		{OpenAI, `false`, "accepts no value"},
		{Anthropic, `{"$ref":"#/$defs/n","$defs":{"n":{"type":"object","properties":{"n":{"$ref":"#/$defs/n"}}}}}`, "recursive"},
		{OpenAI, `{"type":"object","properties":{"a":{"$ref":"other.json"}}}`, "not to a place in the schema itself"},
		{Anthropic, `{"type":"object","properties":{` + strings.Repeat(`"a":{"type":"string"},`, 0) + props(30) + `}}`, ""},
		{OpenAI, `{"type":"array","items":{"type":"string"}}`, ""},
	} {
		_, why := Project([]byte(tt.schema), tt.family, tt.family == OpenAI && strings.HasPrefix(tt.schema, `{"type":"array"`), Budget{})
		if tt.want == "" && strings.HasPrefix(tt.schema, `{"type":"array"`) {
			if !strings.Contains(why, "not an object") {
				t.Errorf("a reply's array: %q", why)
			}
			continue
		}
		if (tt.want == "") != (why == "") || !strings.Contains(why, tt.want) {
			t.Errorf("%s %.60s: %q; want %q", tt.family, tt.schema, why, tt.want)
		}
	}
	// Past Anthropic's optional limit the rest are required and nullable,
	// which its union limit then bounds.
	p, why := Project([]byte(`{"type":"object","properties":{`+props(30)+`}}`), Anthropic, false, Budget{})
	if why != "" || strings.Count(string(p.Schema), `{"type":"null"}`) != 6 {
		t.Errorf("30 optional: %q %s", why, p.Schema)
	}
	if _, why := Project([]byte(`{"type":"object","properties":{`+props(50)+`}}`), Anthropic, false, Budget{}); !strings.Contains(why, "union") {
		t.Errorf("50 optional: %q", why)
	}
}

func props(n int) string {
	var b []string
	for i := range n {
		b = append(b, `"p`+string(rune('a'+i/26))+string(rune('a'+i%26))+`":{"type":"string"}`)
	}
	return strings.Join(b, ",")
}

// Back undoes what the projection added, and nothing else.
func TestProjection_Back(t *testing.T) {
	for _, tt := range []struct{ family, schema, in, want string }{
		{OpenAI, `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}},"required":["a"]}`,
			`{"a":"x","b":null}`, `{"a":"x"}`},
		{OpenAI, `{"type":"object","properties":{"a":{"type":["string","null"]}}}`,
			`{"a":null}`, `{"a":null}`}, // the schema's own null stays
		{OpenAI, `{"type":"array","items":{"type":"object","properties":{"o":{"type":"object","properties":{"z":{"type":"string"}}}}}}`,
			`[{"o":{"z":null}},{"o":null}]`, `[{"o":{}},{}]`},
		{OpenAI, `{"type":"object","properties":{"m":{"type":"object","additionalProperties":{"type":"integer"}}},"required":["m"]}`,
			`{"m":[{"key":"b","value":2},{"key":"a","value":1}]}`, `{"m":{"b":2,"a":1}}`},
		{OpenAI, `{"type":"object","properties":{"id":{"type":"string"}},"required":["id"],"additionalProperties":{"type":"string"}}`,
			`{"id":"1","other_members":[{"key":"x","value":"y"}]}`, `{"id":"1","x":"y"}`},
		{Anthropic, `{"type":"object","properties":{"x":{}},"required":["x"]}`,
			`{"x":"{\"deep\":[1,2.50]}"}`, `{"x":{"deep":[1,2.50]}}`},
		{OpenAI, `{"type":"object","properties":{"u":{"anyOf":[{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]},{"type":"object","properties":{"b":{"type":"string"}}}]}},"required":["u"]}`,
			`{"u":{"b":null}}`, `{"u":{}}`},
	} {
		p, why := Project([]byte(tt.schema), tt.family, false, Budget{})
		if why != "" {
			t.Fatalf("%s: %s", tt.schema, why)
		}
		got, _ := p.Back([]byte(tt.in))
		if string(got) != tt.want {
			t.Errorf("%s under %.60s: %s; want %s", tt.in, tt.schema, got, tt.want)
		}
	}
}
