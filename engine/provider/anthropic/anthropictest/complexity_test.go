package anthropictest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// The fake refuses strict schemas past the complexity limits, counted over
// a request's strict schemas together, and takes them within.
func TestComplexity(t *testing.T) {
	props := func(n int, required, union bool) json.RawMessage {
		var p, r []string
		for i := range n {
			s := `{"type":"string"}`
			if union {
				s = `{"type":["string","null"]}`
			}
			p = append(p, fmt.Sprintf(`"p%d":%s`, i, s))
			if required {
				r = append(r, fmt.Sprintf(`"p%d"`, i))
			}
		}
		return json.RawMessage(`{"type":"object","properties":{` + strings.Join(p, ",") + `},"required":[` + strings.Join(r, ",") + `],"additionalProperties":false}`)
	}
	for _, tt := range []struct {
		schemas []json.RawMessage
		want    string
	}{
		{[]json.RawMessage{props(24, false, false)}, ""},
		{[]json.RawMessage{props(25, false, false)}, "too many optional parameters (25)"},
		{[]json.RawMessage{props(12, false, false), props(13, false, false)}, "too many optional parameters (25)"},
		{[]json.RawMessage{props(16, true, true)}, ""},
		{[]json.RawMessage{props(17, true, true)}, "too many parameters with union types (17"},
	} {
		got := complexity(tt.schemas)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("%d schemas: %q; want %q", len(tt.schemas), got, tt.want)
		}
	}
	if got := SchemaProblem(json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer","minimum":1}},"required":["n"],"additionalProperties":false}`)); !strings.Contains(got, "'minimum' is not supported") {
		t.Errorf("minimum: %q", got)
	}
}
