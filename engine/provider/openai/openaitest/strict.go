package openaitest

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"
)

// The strict subset and its limits, as OpenAI documents them
// (developers.openai.com/api/docs/guides/structured-outputs, "Supported
// schemas"), held to every strict function's parameters and every strict
// json_schema: the keywords it names, the formats it names ("'default' is
// not permitted", allOf, not, if/then/else, dependentRequired and
// dependentSchemas "not supported"); "up to 5000 object properties total,
// with up to 10 levels of nesting"; "total string length of all property
// names, definition names, enum values, and const values cannot exceed
// 120,000 characters"; "up to 1000 enum values across all enum
// properties"; a single enum of more than 250 strings within 15,000
// characters. The refusals are worded as the API's ("Invalid schema for
// function 'f': In context=(), 'default' is not permitted.", "6 levels of
// nesting exceeds limit of 5").
var (
	strictKeywords = []string{"type", "properties", "required", "additionalProperties", "items", "anyOf", "enum", "const", "$ref", "$defs", "definitions",
		"description", "title", "pattern", "format", "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum", "minItems", "maxItems"}
	strictFormats = []string{"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)

// StrictProblem says why OpenAI refuses schema (decoded) as a strict
// function's parameters or a strict json_schema, or "": its shape (every
// object closed, every property required), its keywords and formats, and
// the documented limits.
func StrictProblem(schema any) string {
	if msg := strictProblem(schema, ""); msg != "" {
		return msg
	}
	if msg := keywordProblem(schema, ""); msg != "" {
		return msg
	}
	root, _ := schema.(map[string]any)
	c := &strictCount{root: root, depths: map[string]int{}}
	c.walk(schema)
	for _, k := range []string{"$defs", "definitions"} {
		defs, _ := root[k].(map[string]any)
		for name, d := range defs {
			c.chars += utf8.RuneCountInString(name)
			c.walk(d)
		}
	}
	switch depth, _ := c.depth(schema, map[string]bool{}); {
	case depth > 10:
		return fmt.Sprintf("Invalid schema: %d levels of nesting exceeds limit of 10.", depth)
	case c.properties > 5000:
		return fmt.Sprintf("Invalid schema: %d object properties exceeds limit of 5000.", c.properties)
	case c.enums > 1000:
		return fmt.Sprintf("Invalid schema: %d enum values exceeds limit of 1000.", c.enums)
	case c.chars > 120000:
		return fmt.Sprintf("Invalid schema: total string length of property names, definition names, enum values and const values (%d) exceeds limit of 120000.", c.chars)
	case c.bigEnum:
		return "Invalid schema: an enum of more than 250 string values exceeds the total string length limit of 15000."
	}
	return ""
}

// keywordProblem says which keyword or format of schema strict mode does
// not take, or "".
func keywordProblem(schema any, where string) string {
	m, ok := schema.(map[string]any)
	if !ok {
		return ""
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !slices.Contains(strictKeywords, k) {
			return fmt.Sprintf("In context=(%s), '%s' is not permitted.", where, k)
		}
	}
	if f, ok := m["format"]; ok && !slices.Contains(strictFormats, str(f)) {
		return fmt.Sprintf("In context=(%s), format '%v' is not supported.", where, f)
	}
	if props, ok := m["properties"].(map[string]any); ok {
		for _, k := range slices.Sorted(maps.Keys(props)) {
			if msg := keywordProblem(props[k], join(where, "'properties', '"+k+"'")); msg != "" {
				return msg
			}
		}
	}
	if msg := keywordProblem(m["items"], join(where, "'items'")); msg != "" {
		return msg
	}
	if list, ok := m["anyOf"].([]any); ok {
		for i, sub := range list {
			if msg := keywordProblem(sub, join(where, fmt.Sprintf("'anyOf', '%d'", i))); msg != "" {
				return msg
			}
		}
	}
	for _, key := range []string{"$defs", "definitions"} {
		defs, _ := m[key].(map[string]any)
		for _, k := range slices.Sorted(maps.Keys(defs)) {
			if msg := keywordProblem(defs[k], join(where, fmt.Sprintf("'%s', '%s'", key, k))); msg != "" {
				return msg
			}
		}
	}
	return ""
}

// A strictCount adds up what the limits count.
type strictCount struct {
	root                     map[string]any
	properties, enums, chars int
	bigEnum                  bool
	depths                   map[string]int
}

func (c *strictCount) walk(v any) {
	m, ok := v.(map[string]any)
	if !ok {
		return
	}
	if props, ok := m["properties"].(map[string]any); ok {
		c.properties += len(props)
		for k, p := range props {
			c.chars += utf8.RuneCountInString(k)
			c.walk(p)
		}
	}
	c.walk(m["items"])
	if list, ok := m["anyOf"].([]any); ok {
		for _, b := range list {
			c.walk(b)
		}
	}
	if e, ok := m["enum"].([]any); ok {
		c.enums += len(e)
		n := 0
		for _, x := range e {
			if s, ok := x.(string); ok {
				n += utf8.RuneCountInString(s)
			}
		}
		c.chars += n
		c.bigEnum = c.bigEnum || len(e) > 250 && n > 15000
	}
	if s, ok := m["const"].(string); ok {
		c.chars += utf8.RuneCountInString(s)
	}
}

// depth is how many objects deep v nests, through its references (a
// recursive one counted once round). cut reports that a recursion was cut
// below v: its depth then depends on the way in, and is not remembered.
func (c *strictCount) depth(v any, seen map[string]bool) (d int, cut bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return 0, false
	}
	if ref, ok := m["$ref"].(string); ok {
		for _, k := range []string{"$defs", "definitions"} {
			name, ok := strings.CutPrefix(ref, "#/"+k+"/")
			if !ok {
				continue
			}
			key := k + "/" + name
			if seen[key] {
				return 0, true
			}
			if d, ok := c.depths[key]; ok {
				return d, false
			}
			defs, _ := c.root[k].(map[string]any)
			seen[key] = true
			d, cut = c.depth(defs[name], seen)
			delete(seen, key)
			if !cut {
				c.depths[key] = d
			}
			return d, cut
		}
		return 0, false
	}
	own := 0
	if m["type"] == "object" {
		own = 1
	}
	deepest := 0
	visit := func(v any) {
		n, x := c.depth(v, seen)
		deepest = max(deepest, n)
		cut = cut || x
	}
	if props, ok := m["properties"].(map[string]any); ok {
		for _, p := range props {
			visit(p)
		}
	}
	visit(m["items"])
	if list, ok := m["anyOf"].([]any); ok {
		for _, b := range list {
			visit(b)
		}
	}
	return own + deepest, cut
}
