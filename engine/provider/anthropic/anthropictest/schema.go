package anthropictest

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// The JSON Schema subset of structured outputs (see the package's doc).
var (
	schemaFormats = []string{"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"}
	// schemaRefused are the keywords the subset names as not supported.
	schemaRefused = []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minLength", "maxLength",
		"maxItems", "uniqueItems", "contains", "minContains", "maxContains", "prefixItems", "minProperties", "maxProperties",
		"patternProperties", "propertyNames", "unevaluatedProperties", "unevaluatedItems", "dependentRequired", "dependentSchemas",
		"if", "then", "else", "not", "oneOf"}
)

// The complexity limits of structured outputs, over every strict tool's
// input_schema and the JSON output format of one request together (the
// structured-outputs page's limits; the API's 400s: "Schemas contains too
// many optional parameters (28), which would make grammar compilation
// inefficient. Reduce the number of optional parameters in your tool
// schemas (limit: 24).", "Schemas contains too many parameters with union
// types (24 parameters with type arrays or anyOf) ... (limit: 16
// parameters with unions)"): 20 strict tools, 24 optional properties, 16
// schemas with a union.
const (
	maxStrictTools = 20
	maxOptional    = 24
	maxUnions      = 16
)

// complexity says why the API refuses a request's strict schemas together,
// or "".
func complexity(schemas []json.RawMessage) string {
	if len(schemas) > maxStrictTools {
		return fmt.Sprintf("Too many strict tools (%d); the limit is %d.", len(schemas), maxStrictTools)
	}
	optional, unions := 0, 0
	var walk func(v any)
	walk = func(v any) { // a schema: its subschemas, not its values
		x, ok := v.(map[string]any)
		if !ok {
			return
		}
		props, _ := x["properties"].(map[string]any)
		req, _ := x["required"].([]any)
		for _, k := range slices.Sorted(maps.Keys(props)) {
			if !slices.Contains(req, any(k)) {
				optional++
			}
			walk(props[k])
		}
		if t, ok := x["type"].([]any); ok && len(t) > 1 {
			unions++
		}
		if _, ok := x["anyOf"]; ok {
			unions++
		}
		for _, k := range []string{"anyOf", "allOf"} {
			list, _ := x[k].([]any)
			for _, b := range list {
				walk(b)
			}
		}
		walk(x["items"])
		for _, k := range []string{"$defs", "definitions"} {
			defs, _ := x[k].(map[string]any)
			for _, name := range slices.Sorted(maps.Keys(defs)) {
				walk(defs[name])
			}
		}
	}
	for _, raw := range schemas {
		var v any
		json.Unmarshal(raw, &v)
		walk(v)
	}
	switch {
	case optional > maxOptional:
		return fmt.Sprintf("Schemas contains too many optional parameters (%d), which would make grammar compilation inefficient. Reduce the number of optional parameters in your tool schemas (limit: %d).", optional, maxOptional)
	case unions > maxUnions:
		return fmt.Sprintf("Schemas contains too many parameters with union types (%d parameters with type arrays or anyOf), which would make grammar compilation inefficient. Reduce the number of parameters with union types (limit: %d parameters with unions).", unions, maxUnions)
	}
	return ""
}

// SchemaProblem says why the API refuses raw as the one strict schema of
// a request (a strict tool's input_schema, or the JSON output format's), or
// "": the subset, then the complexity limits.
func SchemaProblem(raw json.RawMessage) string {
	if msg := schemaProblem(raw); msg != "" {
		return msg
	}
	return complexity([]json.RawMessage{raw})
}

// schemaProblem says why the API refuses raw as a strict or JSON output
// schema, or "".
func schemaProblem(raw json.RawMessage) string {
	var root any
	if err := json.Unmarshal(raw, &root); err != nil {
		return "JSON schema is invalid: " + err.Error()
	}
	c := schemaCheck{root: root, refs: map[string][]string{}}
	if msg := c.node("", "", root); msg != "" {
		return msg
	}
	if cycle := c.cycle(); cycle != "" {
		return "Too many recursive definitions in schema: " + cycle + " refers back to itself"
	}
	return ""
}

// A schemaCheck walks one schema, noting which definitions refer to
// which.
type schemaCheck struct {
	root any
	refs map[string][]string // "$defs/x" (or "" for the root) → the definitions it refers to
}

func (c *schemaCheck) node(path, def string, v any) string {
	m, ok := v.(map[string]any)
	if !ok {
		if _, isBool := v.(bool); isBool {
			return ""
		}
		return fmt.Sprintf("%s: a schema must be an object", at(path))
	}
	for _, check := range []func(map[string]any) string{keywordsRefused, objectClosed, formatKnown, patternPlain, enumPrimitive} {
		if msg := check(m); msg != "" {
			return at(path) + ": " + msg
		}
	}
	if msg := c.ref(path, def, m); msg != "" {
		return msg
	}
	return c.children(path, def, m)
}

// keywordsRefused names a keyword of m the subset does not take, or "".
func keywordsRefused(m map[string]any) string {
	for _, k := range schemaRefused {
		if _, has := m[k]; has {
			return fmt.Sprintf("'%s' is not supported", k)
		}
	}
	if n, has := m["minItems"]; has && n != 0.0 && n != 1.0 {
		return "'minItems' values other than 0 or 1 are not supported"
	}
	return ""
}

// objectClosed: every object's additionalProperties is false.
func objectClosed(m map[string]any) string {
	_, props := m["properties"]
	if props || m["type"] == "object" || isList(m["type"]) && slices.Contains(m["type"].([]any), any("object")) {
		if m["additionalProperties"] != false {
			return "For 'object' type, 'additionalProperties' must be explicitly set to false"
		}
	}
	return ""
}

// formatKnown: a string format is one the subset lists.
func formatKnown(m map[string]any) string {
	if f, has := m["format"]; has {
		if name, _ := f.(string); !slices.Contains(schemaFormats, name) {
			return fmt.Sprintf("string format '%v' is not supported", f)
		}
	}
	return ""
}

// patternPlain: a pattern has no backreference, lookaround or word
// boundary.
func patternPlain(m map[string]any) string {
	if p, has := m["pattern"]; has {
		re, _ := p.(string)
		for _, bad := range []string{`\1`, `\2`, `(?=`, `(?!`, `(?<=`, `(?<!`, `\b`, `\B`} {
			if strings.Contains(re, bad) {
				return fmt.Sprintf("the pattern's %s is not supported", bad)
			}
		}
	}
	return ""
}

// enumPrimitive: an enum's values are primitives.
func enumPrimitive(m map[string]any) string {
	if e, has := m["enum"].([]any); has {
		for _, x := range e {
			switch x.(type) {
			case map[string]any, []any:
				return "enum values must be strings, numbers, booleans or null"
			}
		}
	}
	return ""
}

// ref notes m's $ref, which must name one of the schema's own
// definitions.
func (c *schemaCheck) ref(path, def string, m map[string]any) string {
	if ref, has := m["$ref"].(string); has {
		name, ok := localDef(ref)
		if !ok || c.def(name) == nil {
			return fmt.Sprintf("%s: $ref %q is not supported: only references to the schema's own $defs or definitions are", at(path), ref)
		}
		c.refs[def] = append(c.refs[def], name)
	}
	return ""
}

// children checks m's subschemas: anyOf and allOf (no allOf with a $ref),
// properties, items, and at the top the definitions.
func (c *schemaCheck) children(path, def string, m map[string]any) string {
	for _, k := range []string{"anyOf", "allOf"} {
		list, _ := m[k].([]any)
		for i, sub := range list {
			if sm, ok := sub.(map[string]any); ok && k == "allOf" && sm["$ref"] != nil {
				return fmt.Sprintf("%s: allOf with $ref is not supported", at(path))
			}
			if msg := c.node(fmt.Sprintf("%s.%s.%d", path, k, i), def, sub); msg != "" {
				return msg
			}
		}
	}
	if pm, ok := m["properties"].(map[string]any); ok {
		for _, name := range slices.Sorted(maps.Keys(pm)) {
			if msg := c.node(path+".properties."+name, def, pm[name]); msg != "" {
				return msg
			}
		}
	}
	if items, has := m["items"]; has {
		if msg := c.node(path+".items", def, items); msg != "" {
			return msg
		}
	}
	if path != "" {
		return ""
	}
	for _, k := range []string{"$defs", "definitions"} {
		defs, _ := m[k].(map[string]any)
		for _, name := range slices.Sorted(maps.Keys(defs)) {
			if msg := c.node(k+"."+name, k+"/"+name, defs[name]); msg != "" {
				return msg
			}
		}
	}
	return ""
}

// def is the root's definition name ("$defs/x"), or nil.
func (c *schemaCheck) def(name string) any {
	k, n, _ := strings.Cut(name, "/")
	root, _ := c.root.(map[string]any)
	defs, _ := root[k].(map[string]any)
	return defs[n]
}

// cycle is a definition that refers back to itself, or "".
func (c *schemaCheck) cycle() string {
	state := map[string]int{}
	var visit func(n string) string
	visit = func(n string) string {
		switch state[n] {
		case 1:
			return n
		case 2:
			return ""
		}
		state[n] = 1
		for _, next := range c.refs[n] {
			if found := visit(next); found != "" {
				return found
			}
		}
		state[n] = 2
		return ""
	}
	for _, n := range slices.Sorted(maps.Keys(c.refs)) {
		if found := visit(n); found != "" {
			return found
		}
	}
	return ""
}

// localDef is the definition a $ref names ("$defs/x"), when it is one of
// the schema's own.
func localDef(ref string) (string, bool) {
	for _, k := range []string{"$defs", "definitions"} {
		if name, ok := strings.CutPrefix(ref, "#/"+k+"/"); ok && name != "" && !strings.Contains(name, "/") {
			return k + "/" + name, true
		}
	}
	return "", false
}

func at(path string) string {
	if path == "" {
		return "the schema's top level"
	}
	return strings.TrimPrefix(path, ".")
}

func isList(v any) bool { _, ok := v.([]any); return ok }
