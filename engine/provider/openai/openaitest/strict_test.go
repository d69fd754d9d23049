package openaitest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// The fake refuses a strict schema outside OpenAI's documented subset and
// limits, and takes one within them.
func TestStrictProblem(t *testing.T) {
	nested := `{"type":"string"}`
	for range 11 {
		nested = `{"type":"object","properties":{"a":` + nested + `},"required":["a"],"additionalProperties":false}`
	}
	enum := make([]string, 1001)
	for i := range enum {
		enum[i] = fmt.Sprintf("%q", fmt.Sprint(i))
	}
	for _, tt := range []struct{ schema, want string }{
		{`{"type":"object","properties":{"a":{"type":"string","pattern":"^a","format":"email"}},"required":["a"],"additionalProperties":false}`, ""},
		{`{"type":"object","properties":{"a":{"type":"string","default":"x"}},"required":["a"],"additionalProperties":false}`, "'default' is not permitted"},
		{`{"type":"object","properties":{"a":{"type":"string","minLength":1}},"required":["a"],"additionalProperties":false}`, "'minLength' is not permitted"},
		{`{"type":"object","properties":{"a":{"type":"string","format":"uri"}},"required":["a"],"additionalProperties":false}`, "format 'uri' is not supported"},
		{`{"type":"object","properties":{"a":{"oneOf":[{"type":"string"}]}},"required":["a"],"additionalProperties":false}`, "'oneOf' is not permitted"},
		{`{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}`, "'required' is required"},
		{nested, "11 levels of nesting exceeds limit of 10"},
		{`{"type":"object","properties":{"a":{"type":"string","enum":[` + strings.Join(enum, ",") + `]}},"required":["a"],"additionalProperties":false}`, "1001 enum values exceeds limit of 1000"},
	} {
		var v any
		if err := json.Unmarshal([]byte(tt.schema), &v); err != nil {
			t.Fatal(err)
		}
		got := StrictProblem(v)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("%.80s: %q; want %q", tt.schema, got, tt.want)
		}
	}
}
