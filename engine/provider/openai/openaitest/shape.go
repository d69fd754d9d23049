package openaitest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
)

// strictProblem says why schema does not fit strict mode, or "".
func strictProblem(schema any, where string) string {
	m, ok := schema.(map[string]any)
	if !ok {
		return ""
	}
	if props, ok := m["properties"].(map[string]any); ok || m["type"] == "object" {
		if m["additionalProperties"] != false {
			return fmt.Sprintf("In context=(%s), 'additionalProperties' is required to be supplied and to be false.", where)
		}
		req, _ := m["required"].([]any)
		for k := range props {
			if !slices.Contains(req, any(k)) {
				return fmt.Sprintf("In context=(%s), 'required' is required to be supplied and to be an array including every key in properties. Missing '%s'.", where, k)
			}
		}
		for k, p := range props {
			if msg := strictProblem(p, join(where, "'properties', '"+k+"'")); msg != "" {
				return msg
			}
		}
	}
	if msg := strictProblem(m["items"], join(where, "'items'")); msg != "" {
		return msg
	}
	for _, key := range []string{"anyOf", "$defs", "definitions"} {
		switch v := m[key].(type) {
		case []any:
			for i, sub := range v {
				if msg := strictProblem(sub, join(where, fmt.Sprintf("'%s', '%d'", key, i))); msg != "" {
					return msg
				}
			}
		case map[string]any:
			for k, sub := range v {
				if msg := strictProblem(sub, join(where, fmt.Sprintf("'%s', '%s'", key, k))); msg != "" {
					return msg
				}
			}
		}
	}
	return ""
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + ", " + b
}

// mentionsJSON reports whether v holds the word json, in any case, in a
// string anywhere.
func mentionsJSON(v any) bool {
	b, _ := json.Marshal(v)
	return bytes.Contains(bytes.ToLower(b), []byte("json"))
}
