// Package projectiontest writes, for tests, the value a model answering
// within a schema it is sent would give: the least one the schema takes,
// every nullable member null (an answer that leaves out every optional
// property a strict projection made nullable).
package projectiontest

import (
	"encoding/json"
	"math"
	"regexp"
	"slices"
	"strings"
)

// Minimal is the least value schema (JSON) takes; nil when it does not
// decode.
func Minimal(schema json.RawMessage) json.RawMessage {
	var root map[string]any
	if json.Unmarshal(schema, &root) != nil {
		return nil
	}
	b, _ := json.Marshal(minimal(root, root, 0))
	return b
}

// MinimalAt is the least value the schema v takes, its references
// resolved in root (a decoded schema holding the $defs or definitions).
func MinimalAt(v any, root map[string]any) any { return minimal(v, root, 0) }

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// minimal is a value the projected schema s (in the tool schema root, for
// its $defs) accepts, with every nullable member null: the answer that
// leaves out every optional property.
func minimal(v any, root map[string]any, depth int) any {
	s, _ := v.(map[string]any)
	if depth > 40 || s == nil {
		return nil
	}
	if ref, ok := s["$ref"].(string); ok {
		for _, k := range []string{"$defs", "definitions"} {
			if name, ok := strings.CutPrefix(ref, "#/"+k+"/"); ok {
				defs, _ := root[k].(map[string]any)
				return minimal(defs[name], root, depth+1)
			}
		}
		return nil
	}
	if list, ok := s["anyOf"].([]any); ok {
		for _, b := range list {
			if bm, _ := b.(map[string]any); bm["type"] == "null" {
				return nil
			}
		}
		// A branch that does not refer back first: it ends.
		for _, b := range list {
			if !strings.Contains(string(mustJSON(b)), "$ref") {
				return minimal(b, root, depth+1)
			}
		}
		return minimal(list[0], root, depth+1)
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	if c, ok := s["const"]; ok {
		return c
	}
	t := s["type"]
	if list, ok := t.([]any); ok {
		t = list[0]
		if slices.Contains(list, any("null")) {
			return nil
		}
	}
	switch t {
	case "object":
		out := map[string]any{}
		props, _ := s["properties"].(map[string]any)
		req, _ := s["required"].([]any)
		for _, r := range req {
			name := r.(string)
			out[name] = minimal(props[name], root, depth+1)
		}
		return out
	case "array":
		out := []any{}
		n, _ := s["minItems"].(float64)
		for range int(n) {
			out = append(out, minimal(s["items"], root, depth+1))
		}
		return out
	case "string":
		if s["description"] == "Any JSON value, written as JSON text in this string." {
			return "null"
		}
		if f, ok := s["format"].(string); ok {
			return map[string]string{"date-time": "2024-01-02T03:04:05Z", "date": "2024-01-02", "time": "03:04:05Z", "duration": "P1D",
				"email": "a@example.com", "hostname": "example.com", "ipv4": "127.0.0.1", "ipv6": "::1", "uuid": "123e4567-e89b-12d3-a456-426614174000", "uri": "https://example.com/"}[f]
		}
		if p, ok := s["pattern"].(string); ok {
			if re, err := regexp.Compile(p); err == nil {
				for _, cand := range []string{"a", "A", "0", "1", "a1", "aa", "abc", "http://example.com", "1.0.0", "#000000", "a-b", "a_b", "a.b", ""} {
					if re.MatchString(cand) {
						return cand
					}
				}
			}
		}
		return "a"
	case "integer", "number":
		x := 0.0
		if m, ok := s["minimum"].(float64); ok && m > x {
			x = m
		}
		if m, ok := s["exclusiveMinimum"].(float64); ok && m >= x {
			x = m + 1
		}
		if m, ok := s["maximum"].(float64); ok && m < x {
			x = m
		}
		if m, ok := s["exclusiveMaximum"].(float64); ok && m <= x {
			x = m - 1
		}
		if m, ok := s["multipleOf"].(float64); ok && m > 0 {
			x = math.Ceil(x/m) * m
		}
		if t == "integer" {
			x = math.Ceil(x)
		}
		return x
	case "boolean":
		return false
	}
	return nil
}
