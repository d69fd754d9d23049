package outputspec

import (
	"fmt"
	"slices"
	"strings"

	"github.com/coda-acp/coda/internal/answer"
)

// Whether a schema fits a provider's strict subset as it is written
// (DESIGN §17). Where it does not, what is sent strict is the family's
// projection (projected.go, outputspec/projection), which is never
// narrower than the schema; strictFit's reason is what `coda validate`
// says when there is no projection either. The subsets, from the
// providers' documents:
//
//   - StrictOpenAI (platform.openai.com/docs/guides/structured-outputs,
//     "Supported schemas"): types string, number, integer, boolean, object,
//     array, null, enum, anyOf (not at a reply's root, which is an object);
//     every object closed (additionalProperties false) and every property
//     required; $defs / definitions with $ref, recursion allowed; string
//     pattern and format (date-time, time, date, duration, email, hostname,
//     ipv4, ipv6, uuid); number multipleOf, maximum, exclusiveMaximum,
//     minimum, exclusiveMinimum; array minItems, maxItems.
//   - StrictAnthropic (platform.claude.com/docs/en/build-with-claude/
//     structured-outputs, "JSON Schema limitations"): the basic types, enum
//     of primitives, const, anyOf, allOf (not with $ref), $ref / $defs /
//     definitions (not recursive), default, required, additionalProperties
//     false on every object (optional properties allowed), string formats
//     (date-time, time, date, duration, email, hostname, uri, ipv4, ipv6,
//     uuid), simple patterns (no backreferences, lookaround or word
//     boundaries), minItems 0 or 1; no numeric or length constraints.
//
// Keywords outside a subset (annotations included, but description and
// title, which both take: OpenAI's examples and Anthropic's SDK keep
// them) make a schema not fit it: what a server would do with them is not
// documented. The top level's $schema and $id are the exception: neither
// subset names them, but coda leaves them out of what it sends (shape.go,
// metaless), and without them the schema accepts the same values, since
// its references are its own definitions; so they do not keep it from
// fitting. A $schema naming draft-04 or older does: its keywords read
// otherwise (exclusiveMaximum a flag), and it is sent as written.

// Strict subsets (ToolShape.Strict, llm.Shapes.Strict).
const (
	StrictOpenAI    = answer.StrictOpenAI
	StrictAnthropic = answer.StrictAnthropic
)

// A subset is one provider family's strict subset.
type subset struct {
	name        string
	keywords    []string // beyond the common ones
	formats     []string
	allRequired bool // every property must be required
	recursion   bool // a $ref may lead back to where it is
}

var commonKeywords = []string{"type", "properties", "required", "additionalProperties", "items", "anyOf", "enum", "const", "$ref", "description", "title"}

var subsets = map[string]subset{
	StrictOpenAI: {
		name:        "OpenAI's",
		keywords:    []string{"pattern", "format", "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum", "minItems", "maxItems"},
		formats:     []string{"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"},
		allRequired: true,
		recursion:   true,
	},
	StrictAnthropic: {
		name:     "Anthropic's",
		keywords: []string{"allOf", "default", "format", "pattern", "minItems"},
		formats:  []string{"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"},
	},
}

var jsonTypes = []string{"string", "number", "integer", "boolean", "object", "array", "null"}

// strictFit says why schema v does not fit family's strict subset, or "".
// reply: v is a reply format's schema, whose root must be an object.
func strictFit(v any, family string, reply bool) string {
	sub, ok := subsets[family]
	if !ok {
		return fmt.Sprintf("no strict subset is known for %q", family)
	}
	root, ok := v.(map[string]any)
	if !ok {
		return "the schema is not an object"
	}
	f := &fitter{sub: sub, root: root}
	if reply {
		if t, _ := root["type"].(string); t != "object" {
			return "the top level is not an object (a strict reply format is one)"
		}
	}
	for _, k := range []string{"$defs", "definitions"} {
		defs, ok := root[k]
		if !ok {
			continue
		}
		m, ok := defs.(map[string]any)
		if !ok {
			return fmt.Sprintf("`%s` is not an object", k)
		}
		for _, name := range sortedKeys(m) {
			if why := f.node(k+"."+name, m[name]); why != "" {
				return why
			}
		}
	}
	if why := f.node("", root); why != "" {
		return why
	}
	if !sub.recursion {
		if cycle := f.cycle(); cycle != "" {
			return fmt.Sprintf("`%s` is recursive, which %s strict subset does not take", cycle, sub.name)
		}
	}
	return ""
}

// A fitter walks one schema.
type fitter struct {
	sub  subset
	root map[string]any
	// refs are the definitions each definition refers to, for recursion.
	refs map[string][]string
}

func where(path string) string {
	if path == "" {
		return "the top level"
	}
	return "`" + path + "`"
}

func under(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

// node says why the schema at path does not fit, or "".
func (f *fitter) node(path string, v any) string {
	s, ok := v.(map[string]any)
	if !ok {
		return where(path) + " is not a schema object"
	}
	for _, k := range sortedKeys(s) {
		switch {
		case slices.Contains(commonKeywords, k), slices.Contains(f.sub.keywords, k):
		case (k == "$defs" || k == "definitions") && path == "":
		case (k == "$schema" || k == "$id") && path == "":
			if d := oldDraft(s); d != "" {
				return fmt.Sprintf("the top level's $schema is %s, whose keywords %s strict subset reads otherwise", d, f.sub.name)
			}
		default:
			return fmt.Sprintf("%s has %s, which %s strict subset does not take", where(path), k, f.sub.name)
		}
	}
	types, why := typesOf(path, s)
	if why != "" {
		return why
	}
	_, hasRef := s["$ref"]
	_, hasAny := s["anyOf"]
	_, hasAll := s["allOf"]
	_, hasEnum := s["enum"]
	_, hasConst := s["const"]
	if len(types) == 0 && !hasRef && !hasAny && !hasAll && !hasEnum && !hasConst {
		return where(path) + " has no type"
	}
	if ref, ok := s["$ref"]; ok {
		if why := f.ref(path, ref); why != "" {
			return why
		}
	}
	if _, props := s["properties"]; props || slices.Contains(types, "object") {
		if why := f.object(path, s); why != "" {
			return why
		}
	}
	if items, ok := s["items"]; ok {
		if why := f.node(under(path, "items"), items); why != "" {
			return why
		}
	}
	for _, k := range []string{"anyOf", "allOf"} {
		branches, ok := s[k]
		if !ok {
			continue
		}
		list, ok := branches.([]any)
		if !ok || len(list) == 0 {
			return fmt.Sprintf("%s's %s is not a list of schemas", where(path), k)
		}
		for i, b := range list {
			p := fmt.Sprintf("%s[%d]", under(path, k), i)
			if k == "allOf" {
				if m, ok := b.(map[string]any); ok && m["$ref"] != nil {
					return fmt.Sprintf("%s is a $ref inside allOf, which %s strict subset does not take", where(p), f.sub.name)
				}
			}
			if why := f.node(p, b); why != "" {
				return why
			}
		}
	}
	if e, ok := s["enum"]; ok && f.sub.name == subsets[StrictAnthropic].name {
		list, _ := e.([]any)
		for _, v := range list {
			switch v.(type) {
			case map[string]any, []any:
				return fmt.Sprintf("%s has an enum of objects or arrays, which %s strict subset does not take", where(path), f.sub.name)
			}
		}
	}
	if format, ok := s["format"]; ok {
		name, _ := format.(string)
		if !slices.Contains(f.sub.formats, name) {
			return fmt.Sprintf("%s has format %q, which %s strict subset does not take", where(path), name, f.sub.name)
		}
	}
	if n, ok := s["minItems"]; ok && f.sub.name == subsets[StrictAnthropic].name {
		if x, _ := n.(float64); x != 0 && x != 1 {
			return fmt.Sprintf("%s has minItems %v, where %s strict subset takes only 0 or 1", where(path), n, f.sub.name)
		}
	}
	if p, ok := s["pattern"]; ok && f.sub.name == subsets[StrictAnthropic].name {
		re, _ := p.(string)
		for _, bad := range []string{`\1`, `\2`, `(?=`, `(?!`, `(?<=`, `(?<!`, `\b`, `\B`} {
			if strings.Contains(re, bad) {
				return fmt.Sprintf("%s has a pattern with %s, which %s strict subset does not take", where(path), bad, f.sub.name)
			}
		}
	}
	return ""
}

// typesOf is the schema's type, as a list.
func typesOf(path string, s map[string]any) ([]string, string) {
	var types []string
	switch t := s["type"].(type) {
	case nil:
	case string:
		types = []string{t}
	case []any:
		for _, e := range t {
			name, _ := e.(string)
			types = append(types, name)
		}
	default:
		return nil, where(path) + "'s type is not a name"
	}
	for _, t := range types {
		if !slices.Contains(jsonTypes, t) {
			return nil, fmt.Sprintf("%s has type %q", where(path), t)
		}
	}
	return types, ""
}

// object checks an object schema: closed, and (where the subset says so)
// every property required.
func (f *fitter) object(path string, s map[string]any) string {
	if ap, ok := s["additionalProperties"]; !ok || ap != false {
		return where(path) + " is open: its additionalProperties is not false"
	}
	props, _ := s["properties"].(map[string]any)
	if _, ok := s["properties"]; ok && props == nil {
		return where(path) + "'s properties is not an object"
	}
	required := map[string]bool{}
	if r, ok := s["required"]; ok {
		list, ok := r.([]any)
		if !ok {
			return where(path) + "'s required is not a list"
		}
		for _, e := range list {
			name, _ := e.(string)
			required[name] = true
		}
	}
	for _, name := range sortedKeys(props) {
		p := under(under(path, "properties"), name)
		if f.sub.allRequired && !required[name] {
			return "`" + p + "` is optional"
		}
		if why := f.node(p, props[name]); why != "" {
			return why
		}
	}
	return ""
}

// ref checks a $ref: one of the root's own definitions.
func (f *fitter) ref(path string, v any) string {
	ref, _ := v.(string)
	for _, k := range []string{"$defs", "definitions"} {
		name, ok := strings.CutPrefix(ref, "#/"+k+"/")
		if !ok {
			continue
		}
		defs, _ := f.root[k].(map[string]any)
		if _, ok := defs[name]; !ok || strings.Contains(name, "/") {
			return fmt.Sprintf("%s's $ref %q finds no definition", where(path), ref)
		}
		if f.refs == nil {
			f.refs = map[string][]string{}
		}
		from := defName(path)
		f.refs[from] = append(f.refs[from], k+"."+name)
		return ""
	}
	return fmt.Sprintf("%s's $ref %q is not to the schema's own definitions", where(path), ref)
}

// defName is the definition a path lies in ("$defs.node"), or "" for the
// schema's root.
func defName(path string) string {
	for _, k := range []string{"$defs.", "definitions."} {
		if rest, ok := strings.CutPrefix(path, k); ok {
			name, _, _ := strings.Cut(rest, ".")
			return k + name
		}
	}
	return ""
}

// cycle is a definition that leads back to itself through references, or
// "".
func (f *fitter) cycle() string {
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(n string) string
	visit = func(n string) string {
		switch state[n] {
		case 1:
			return n
		case 2:
			return ""
		}
		state[n] = 1
		for _, next := range f.refs[n] {
			if c := visit(next); c != "" {
				return c
			}
		}
		state[n] = 2
		return ""
	}
	for _, n := range sortedKeys(f.refs) {
		if c := visit(n); c != "" {
			return c
		}
	}
	return ""
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
