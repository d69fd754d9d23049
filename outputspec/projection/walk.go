package projection

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// unfit says why a schema has no faithful projection; optional: only the
// family's limit on optional properties was passed.
type unfit struct {
	why      string
	optional bool
}

// A projector derives one projection.
type projector struct {
	f        *family
	nullable bool // optional properties required and nullable
	root     any  // the caller's schema, decoded
	// defNames are the $defs names of the references met, by reference as
	// written; defSrc the schemas they name, projected in defOrder.
	defNames map[string]string
	defSrc   map[string]any
	defOrder []string
	dropped  []string
	marks
	// keep is how many more optional properties may stay optional (the
	// family's limit, less the budget's); past it they are required and
	// nullable. -1: no limit.
	keep  int
	err   *unfit
	depth int // of node's calls, bounded: merging inlines references
	work  int // node's calls in all, bounded likewise
}

// maxNesting bounds how deep a projection's schemas nest; maxWork how many
// schemas it projects in all (inlining can multiply them).
const (
	maxNesting = 64
	maxWork    = 20000
)

func project(v any, f *family, nullable, reply bool, budget Budget) (*Projection, *unfit) {
	p := &projector{f: f, nullable: nullable, root: v, defNames: map[string]string{}, defSrc: map[string]any{}, marks: newMarks(), keep: -1}
	if f.maxOptional > 0 {
		p.keep = max(f.maxOptional-budget.Optional, 0)
	}
	top := p.node("", v)
	defs := newObject()
	for i := 0; i < len(p.defOrder) && p.err == nil; i++ {
		name := p.defOrder[i]
		defs.set(name, p.node("$defs."+name, p.defSrc[name]))
	}
	if p.err != nil {
		return nil, p.err
	}
	for _, name := range defs.keys {
		seen := map[string]bool{}
		for d, ok := defs.vals[name].(*object); ok; d, ok = defs.vals[strings.TrimPrefix(d.vals["$ref"].(string), "#/$defs/")].(*object) {
			if _, isRef := d.vals["$ref"].(string); !isRef {
				break
			}
			ref := d.vals["$ref"].(string)
			if seen[ref] {
				return nil, &unfit{why: fmt.Sprintf("`$defs.%s` refers only to itself", name)}
			}
			seen[ref] = true
		}
	}
	if reply {
		for ref, ok := top.get("$ref"); ok; ref, ok = top.get("$ref") {
			name := strings.TrimPrefix(ref.(string), "#/$defs/")
			d, _ := defs.get(name)
			top = d.(*object).clone() // the root of a reply format is an object, not a reference
		}
		if t, _ := top.get("type"); t != "object" {
			return nil, &unfit{why: "the top level is not an object (a strict reply format is one)"}
		}
	}
	if !f.recursion {
		if cycle := cycleOf(top, defs); cycle != "" {
			return nil, &unfit{why: fmt.Sprintf("`%s` is recursive, which %s strict subset does not take", cycle, f.name)}
		}
	}
	c, u := p.limits(top, defs, budget)
	if u != nil {
		return nil, u
	}
	out := &Projection{family: f, root: top, defs: defs, marks: p.marks, Dropped: p.dropped, Optional: c.optional, Unions: c.unions}
	content, _ := top.MarshalJSON()
	out.Content = content
	whole := top
	if len(defs.keys) > 0 {
		d, _ := defs.MarshalJSON()
		out.Defs = `"$defs":` + string(d)
		whole = top.clone()
		whole.set("$defs", defs)
	}
	out.Schema, _ = whole.MarshalJSON()
	return out, nil
}

func (p *projector) fail(why string) {
	if p.err == nil {
		p.err = &unfit{why: why}
	}
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

// node projects the schema v found at path.
func (p *projector) node(path string, v any) *object {
	if p.err != nil {
		return newObject()
	}
	if p.depth++; p.depth > maxNesting {
		p.fail(where(path) + " nests too deep to project (a recursive allOf)")
	}
	if p.work++; p.work > maxWork {
		p.fail(fmt.Sprintf("the schema takes more than %d steps to project (its allOf and references inlined)", maxWork))
	}
	defer func() { p.depth-- }()
	switch s := v.(type) {
	case bool:
		if s {
			return p.anyValue(path)
		}
		p.fail(where(path) + " accepts no value")
	case *object:
		return p.schema(path, s)
	default:
		p.fail(where(path) + " is not a schema")
	}
	return newObject()
}

// Keywords by the type they constrain.
var (
	objectKeywords  = []string{"properties", "required", "additionalProperties", "patternProperties", "propertyNames", "minProperties", "maxProperties", "dependencies", "dependentRequired", "dependentSchemas", "unevaluatedProperties"}
	arrayKeywords   = []string{"items", "prefixItems", "additionalItems", "minItems", "maxItems", "uniqueItems", "contains", "minContains", "maxContains", "unevaluatedItems"}
	stringKeywords  = []string{"pattern", "minLength", "maxLength", "format"}
	numberKeywords  = []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}
	generalKeywords = []string{"$ref", "allOf", "anyOf", "oneOf", "not", "if", "then", "else", "enum", "const", "type"}
)

// constraining reports whether keyword k constrains values (the others
// are annotations, or unknown, which JSON Schema takes as annotations).
func constraining(k string) bool {
	for _, list := range [][]string{objectKeywords, arrayKeywords, stringKeywords, numberKeywords, generalKeywords} {
		if slices.Contains(list, k) {
			return true
		}
	}
	return false
}

// schema projects the schema object s.
func (p *projector) schema(path string, s *object) *object {
	desc, _ := s.vals["description"].(string)
	if ref, ok := s.get("$ref"); ok {
		out := newObject()
		out.set("$ref", "#/$defs/"+p.ref(path, ref))
		var notes []string
		for _, k := range s.keys {
			if k != "$ref" && constraining(k) {
				notes = append(notes, note(k, s.vals[k]))
			}
		}
		p.describe(out, path, desc, notes)
		return out
	}
	if s.has("allOf") {
		s = p.merged(path, s, 0)
		if p.err != nil {
			return newObject()
		}
	}
	var notes []string
	for _, k := range []string{"not", "if", "then", "else"} {
		if v, ok := s.get(k); ok {
			notes = append(notes, note(k, v))
		}
	}
	branches, key := s.vals["anyOf"], "anyOf"
	if branches == nil {
		branches, key = s.vals["oneOf"], "oneOf"
	} else if one, ok := s.get("oneOf"); ok {
		notes = append(notes, note("oneOf", one))
	}
	if branches != nil {
		list, ok := branches.([]any)
		if !ok || len(list) == 0 {
			p.fail(fmt.Sprintf("%s's %s is not a list of schemas", where(path), key))
			return newObject()
		}
		base := s.clone()
		for _, k := range []string{"anyOf", "oneOf", "description", "title", "not", "if", "then", "else"} {
			base.del(k)
		}
		shared := slices.ContainsFunc(base.keys, constraining)
		var out []any
		for i, b := range list {
			if shared {
				bo, ok := b.(*object)
				if !ok {
					if b == true {
						bo = newObject()
					} else {
						continue // false: no value
					}
				}
				b = p.mergeTwo(path, base, bo) // a $ref stays one: its siblings are said, not sent
			}
			out = append(out, p.node(fmt.Sprintf("%s[%d]", under(path, "anyOf"), i), b))
		}
		if key == "oneOf" {
			notes = append(notes, "exactly one of the alternatives")
		}
		o := newObject()
		if len(out) == 1 {
			o = out[0].(*object)
		} else {
			o.set("anyOf", out)
		}
		p.describe(o, path, desc, notes)
		return o
	}
	types := typesOf(s)
	if types == nil {
		p.fail(where(path) + "'s type is not a list of type names")
		return newObject()
	}
	if len(types) == 0 {
		types = inferTypes(s)
	}
	if len(types) == 0 && !s.has("enum") && !s.has("const") {
		return p.anyValue(path)
	}
	if len(types) > 1 && (slices.Contains(types, "object") || slices.Contains(types, "array")) {
		var out []any
		for i, t := range types {
			out = append(out, p.typed(fmt.Sprintf("%s[%d]", under(path, "anyOf"), i), s, []string{t}, "", nil))
		}
		o := newObject()
		o.set("anyOf", out)
		p.describe(o, path, desc, notes)
		return o
	}
	return p.typed(path, s, types, desc, notes)
}

// typesOf is s's type as a list: empty when it has none, nil when it is
// not one.
func typesOf(s *object) []string {
	switch t := s.vals["type"].(type) {
	case nil:
		if s.has("type") {
			return nil
		}
		return []string{}
	case string:
		return []string{t}
	case []any:
		out := []string{}
		for _, e := range t {
			name, ok := e.(string)
			if !ok {
				return nil
			}
			out = append(out, name)
		}
		return out
	}
	return nil
}

// inferTypes are the types a schema without one names by its keywords:
// an enum's or a const's values', else the keywords' (properties name an
// object). A decision: a schema that constrains only objects was written
// for objects, and is sent so.
func inferTypes(s *object) []string {
	var values []any
	if e, ok := s.vals["enum"].([]any); ok {
		values = e
	} else if c, ok := s.get("const"); ok {
		values = []any{c}
	}
	var types []string
	add := func(t string) {
		if !slices.Contains(types, t) {
			types = append(types, t)
		}
	}
	if len(values) > 0 {
		for _, v := range values {
			add(kindOf(v))
		}
		if slices.Contains(types, "number") && slices.Contains(types, "integer") {
			types = slices.DeleteFunc(types, func(t string) bool { return t == "integer" })
		}
		return types
	}
	for _, group := range []struct {
		t        string
		keywords []string
	}{{"object", objectKeywords}, {"array", arrayKeywords}, {"string", stringKeywords}, {"number", numberKeywords}} {
		if slices.ContainsFunc(group.keywords, s.has) {
			add(group.t)
		}
	}
	return types
}

// kindOf is the JSON type of a decoded value.
func kindOf(v any) string {
	switch x := v.(type) {
	case *object:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case bool:
		return "boolean"
	case nil:
		return "null"
	case json.Number:
		if _, err := x.Int64(); err == nil {
			return "integer"
		}
		return "number"
	}
	return ""
}

// typed projects s for the given types, with its enum and const and the
// keywords of those types.
func (p *projector) typed(path string, s *object, types []string, desc string, notes []string) *object {
	out := newObject()
	for _, t := range types {
		if !slices.Contains([]string{"string", "number", "integer", "boolean", "object", "array", "null"}, t) {
			p.fail(fmt.Sprintf("%s has type %q", where(path), t))
			return out
		}
	}
	if len(types) == 1 {
		out.set("type", types[0])
	} else if len(types) > 1 {
		list := make([]any, len(types))
		for i, t := range types {
			list[i] = t
		}
		out.set("type", list)
	}
	if t, ok := s.get("title"); ok {
		out.set("title", t)
	}
	for _, k := range []string{"enum", "const"} {
		v, ok := s.get(k)
		if !ok {
			continue
		}
		if !p.f.enumComplex && complexValues(k, v) {
			notes = append(notes, note(k, v))
			continue
		}
		out.set(k, v)
	}
	if d, ok := s.get("default"); ok && p.f.defaults {
		out.set("default", d)
	}
	for _, t := range types {
		switch t {
		case "object":
			notes = p.object(path, s, out, notes)
		case "array":
			notes = p.array(path, s, out, notes)
		case "string":
			notes = p.str(s, out, notes)
		case "number", "integer":
			notes = p.number(s, out, notes)
		}
	}
	p.describe(out, path, desc, notes)
	return out
}

// complexValues reports whether an enum (or const) holds objects or arrays.
func complexValues(k string, v any) bool {
	values := []any{v}
	if k == "enum" {
		values, _ = v.([]any)
	}
	return slices.ContainsFunc(values, func(e any) bool {
		switch e.(type) {
		case *object, []any:
			return true
		}
		return false
	})
}

// object projects an object's keywords into out.
func (p *projector) object(path string, s *object, out *object, notes []string) []string {
	props, _ := s.vals["properties"].(*object)
	if s.has("properties") && props == nil {
		p.fail(where(path) + "'s properties is not an object")
		return notes
	}
	ap, hasAP := s.get("additionalProperties")
	apOpen := hasAP && ap != false && ap != true && !isEmpty(ap)
	pattern, _ := s.vals["patternProperties"].(*object)
	open := apOpen || pattern != nil && len(pattern.keys) > 0 || ap != false && props == nil
	if props == nil && open {
		return p.entries(path, s, out, notes)
	}
	required := map[string]bool{}
	if r, ok := s.get("required"); ok {
		list, ok := r.([]any)
		if !ok {
			p.fail(where(path) + "'s required is not a list")
			return notes
		}
		for _, e := range list {
			name, _ := e.(string)
			if !props.has(name) {
				p.fail(fmt.Sprintf("%s requires %q, which its properties do not describe", where(path), name))
				return notes
			}
			required[name] = true
		}
	}
	if props == nil {
		props = newObject()
	}
	projected := newObject()
	var req []any
	for _, name := range props.keys {
		ps := p.node(under(under(path, "properties"), name), props.vals[name])
		switch {
		case required[name]:
			req = append(req, name)
		case !p.nullable && p.keep != 0:
			if p.keep > 0 {
				p.keep--
			}
		default:
			var added bool
			ps, added = nullable(ps)
			if added {
				if p.nulls[out] == nil {
					p.nulls[out] = map[string]bool{}
				}
				p.nulls[out][name] = true
			}
			req = append(req, name)
		}
		projected.set(name, ps)
	}
	if open {
		// The members the properties do not name, as {key, value} pairs
		// under a member of coda's (Back puts them back).
		name := "other_members"
		for i := 2; props.has(name); i++ {
			name = fmt.Sprintf("other_members_%d", i)
		}
		rest := s.clone()
		for _, k := range []string{"properties", "required", "minProperties", "maxProperties", "title", "description"} {
			rest.del(k)
		}
		m := newObject()
		m.set("type", "array")
		notes = p.entries(under(under(path, "properties"), name), rest, m, notes)
		p.extra[out] = name
		projected.set(name, m)
		req = append(req, name)
	}
	out.set("properties", projected)
	if len(req) > 0 || p.f.allRequired {
		if req == nil {
			req = []any{}
		}
		out.set("required", req)
	}
	out.set("additionalProperties", false)
	for _, k := range []string{"minProperties", "maxProperties", "dependencies", "dependentRequired", "dependentSchemas", "propertyNames", "patternProperties"} {
		if v, ok := s.get(k); ok {
			notes = append(notes, note(k, v))
		}
	}
	if v, ok := s.get("unevaluatedProperties"); ok && v != false {
		notes = append(notes, note("unevaluatedProperties", v))
	}
	return notes
}

// entries projects an open map (additionalProperties a schema,
// patternProperties, or any members) into out as an array of {key, value}
// pairs, which Back makes an object again: a closed object would refuse
// members an answer may need, and the pairs take every one.
func (p *projector) entries(path string, s *object, out *object, notes []string) []string {
	title, hasTitle := out.get("title")
	*out = *newObject()
	out.set("type", "array")
	if hasTitle {
		out.set("title", title)
	}
	var values []any
	anyMember := false
	if pattern, ok := s.vals["patternProperties"].(*object); ok {
		for _, k := range pattern.keys {
			values = append(values, pattern.vals[k])
		}
		notes = append(notes, note("keys matching", pattern.keys))
	}
	switch ap, ok := s.get("additionalProperties"); {
	case ok && ap == false:
	case !ok || ap == true || isEmpty(ap):
		anyMember = true
	default:
		values = append(values, ap)
	}
	var value *object
	switch {
	case anyMember:
		value = p.anyValue(under(path, "value"))
	case len(values) == 1:
		value = p.node(under(path, "value"), values[0])
	default:
		var branches []any
		for i, v := range values {
			branches = append(branches, p.node(fmt.Sprintf("%s[%d]", under(path, "value"), i), v))
		}
		value = newObject()
		value.set("anyOf", branches)
	}
	key := newObject()
	key.set("type", "string")
	if names, ok := s.vals["propertyNames"].(*object); ok {
		if pat, ok := names.vals["pattern"].(string); ok && !(p.f.simpleRegex && slices.ContainsFunc(complexRegex, func(c string) bool { return strings.Contains(pat, c) })) {
			key.set("pattern", pat)
		} else {
			notes = append(notes, note("propertyNames", names))
		}
	}
	pair := newObject()
	pair.set("type", "object")
	props := newObject()
	props.set("key", key)
	props.set("value", value)
	pair.set("properties", props)
	pair.set("required", []any{"key", "value"})
	pair.set("additionalProperties", false)
	out.set("items", pair)
	if v, ok := s.vals["minProperties"].(json.Number); ok {
		if n, _ := v.Int64(); p.f.arrayBounds {
			out.set("minItems", v)
		} else if n >= 1 {
			out.set("minItems", json.Number("1"))
		}
	}
	if v, ok := s.vals["maxProperties"].(json.Number); ok {
		if p.f.arrayBounds {
			out.set("maxItems", v)
		} else {
			notes = append(notes, note("maxProperties", v))
		}
	}
	for _, k := range []string{"required", "dependencies", "dependentRequired", "dependentSchemas", "unevaluatedProperties"} {
		if v, ok := s.get(k); ok {
			notes = append(notes, note(k, v))
		}
	}
	p.entry[out] = true
	return append(notes, "the members as {key, value} pairs, each key once")
}

// isEmpty reports whether v is the schema {}, or one of annotations only.
func isEmpty(v any) bool {
	o, ok := v.(*object)
	return ok && !slices.ContainsFunc(o.keys, constraining)
}

// nullable is ps accepting null as well, and whether that was added.
func nullable(ps *object) (*object, bool) {
	if acceptsNull(ps) {
		return ps, false
	}
	w := newObject()
	w.set("anyOf", []any{ps, typeNull()})
	return w, true
}

func typeNull() *object {
	o := newObject()
	o.set("type", "null")
	return o
}

// acceptsNull reports whether a projected schema names null itself.
func acceptsNull(s *object) bool {
	switch t := s.vals["type"].(type) {
	case string:
		if t == "null" && !s.has("enum") {
			return true
		}
	case []any:
		if slices.Contains(t, any("null")) && !s.has("enum") {
			return true
		}
	}
	if e, ok := s.vals["enum"].([]any); ok && slices.Contains(e, nil) {
		return true
	}
	if branches, ok := s.vals["anyOf"].([]any); ok {
		for _, b := range branches {
			if bo, ok := b.(*object); ok && acceptsNull(bo) {
				return true
			}
		}
	}
	return false
}

// array projects an array's keywords into out.
func (p *projector) array(path string, s *object, out *object, notes []string) []string {
	items, hasItems := s.get("items")
	tuple, isTuple := items.([]any)
	extra, hasExtra := s.get("additionalItems")
	if pi, ok := s.vals["prefixItems"].([]any); ok {
		tuple, isTuple = pi, true
		extra, hasExtra = items, hasItems
	}
	switch {
	case isTuple:
		maxItems, _ := s.vals["maxItems"].(json.Number)
		n, _ := maxItems.Int64()
		closed := hasExtra && extra == false || maxItems != "" && int(n) <= len(tuple)
		branches := slices.Clone(tuple)
		if !closed {
			if !hasExtra || extra == true || isEmpty(extra) {
				out.set("items", p.anyValue(under(path, "items")))
				return notes
			}
			branches = append(branches, extra)
		}
		var projected []any
		for i, b := range branches {
			projected = append(projected, p.node(fmt.Sprintf("%s[%d]", under(path, "items"), i), b))
		}
		if len(projected) == 1 {
			out.set("items", projected[0])
		} else if len(projected) > 1 {
			o := newObject()
			o.set("anyOf", projected)
			out.set("items", o)
		}
		notes = append(notes, note("items in order", tuple))
	case hasItems:
		out.set("items", p.node(under(path, "items"), items))
	default:
		out.set("items", p.anyValue(under(path, "items")))
	}
	if v, ok := s.get("minItems"); ok {
		n, _ := v.(json.Number).Int64()
		switch {
		case p.f.arrayBounds:
			out.set("minItems", v)
		case n >= 1:
			out.set("minItems", json.Number("1"))
			if n > 1 {
				notes = append(notes, note("minItems", v))
			}
		}
	}
	if v, ok := s.get("maxItems"); ok {
		if p.f.arrayBounds {
			out.set("maxItems", v)
		} else {
			notes = append(notes, note("maxItems", v))
		}
	}
	for _, k := range []string{"uniqueItems", "contains", "minContains", "maxContains", "unevaluatedItems"} {
		if v, ok := s.get(k); ok && v != false {
			notes = append(notes, note(k, v))
		}
	}
	return notes
}

// complexRegex are what Anthropic's patterns do not take.
var complexRegex = []string{`\1`, `\2`, `\3`, `(?=`, `(?!`, `(?<=`, `(?<!`, `\b`, `\B`}

// str projects a string's keywords into out.
func (p *projector) str(s *object, out *object, notes []string) []string {
	if v, ok := s.get("pattern"); ok {
		re, _ := v.(string)
		if p.f.simpleRegex && slices.ContainsFunc(complexRegex, func(c string) bool { return strings.Contains(re, c) }) {
			notes = append(notes, note("pattern", v))
		} else {
			out.set("pattern", v)
		}
	}
	if v, ok := s.get("format"); ok {
		if name, _ := v.(string); slices.Contains(p.f.formats, name) {
			out.set("format", v)
		} else {
			notes = append(notes, note("format", v))
		}
	}
	for _, k := range []string{"minLength", "maxLength"} {
		if v, ok := s.get(k); ok {
			notes = append(notes, note(k, v))
		}
	}
	return notes
}

// number projects a number's keywords into out: draft-04's boolean
// exclusiveMinimum and exclusiveMaximum read as the later drafts' numbers.
func (p *projector) number(s *object, out *object, notes []string) []string {
	bounds := newObject()
	for _, k := range []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"} {
		if v, ok := s.get(k); ok {
			bounds.set(k, v)
		}
	}
	for _, pair := range [][2]string{{"exclusiveMinimum", "minimum"}, {"exclusiveMaximum", "maximum"}} {
		flag, ok := bounds.vals[pair[0]].(bool)
		if !ok {
			continue
		}
		bounds.del(pair[0])
		if bound, ok := bounds.get(pair[1]); ok && flag {
			bounds.del(pair[1])
			bounds.set(pair[0], bound)
		}
	}
	for _, k := range bounds.keys {
		if _, isNumber := bounds.vals[k].(json.Number); !isNumber {
			continue
		}
		if p.f.numeric {
			out.set(k, bounds.vals[k])
		} else {
			notes = append(notes, note(k, bounds.vals[k]))
		}
	}
	return notes
}

// anyValue is the projection of a schema that takes any value: the
// families' strict subsets type every value and close every object, so it
// is sent as a string holding the value's JSON text, which Back decodes.
func (p *projector) anyValue(path string) *object {
	o := newObject()
	o.set("type", "string")
	o.set("description", anyDescription)
	p.text[o] = true
	return o
}

const anyDescription = "Any JSON value, written as JSON text in this string."

// note is how a keyword left out is said in a description.
func note(k string, v any) string {
	b, _ := encode(v)
	text := string(b)
	if len(text) > 200 {
		text = text[:200] + "…"
	}
	return k + " " + text
}

// describe sets out's description: the schema's own, and what was left
// out.
func (p *projector) describe(out *object, path, desc string, notes []string) {
	if len(notes) > 0 {
		for _, n := range notes {
			p.dropped = append(p.dropped, where(path)+": "+n)
		}
		extra := "Also: " + strings.Join(notes, "; ") + "."
		if desc != "" {
			desc = strings.TrimRight(desc, " ") + " " + extra
		} else {
			desc = extra
		}
	}
	if desc != "" {
		out.set("description", desc)
	}
}

// ref is the $defs name of the schema a $ref points to, to be projected
// there: a definition (draft-07's definitions or $defs), the root ("#"),
// or any other JSON Pointer in the document.
func (p *projector) ref(path string, v any) string {
	ref, _ := v.(string)
	if name, ok := p.defNames[ref]; ok {
		return name
	}
	target, ok := p.pointer(ref)
	if !ok {
		p.fail(fmt.Sprintf("%s's $ref %q is not to a place in the schema itself", where(path), ref))
		return "_"
	}
	base := "root"
	if i := strings.LastIndex(ref, "/"); i >= 0 {
		base = ref[i+1:]
	}
	base = strings.Map(func(r rune) rune {
		if r == '_' || r == '-' || r == '.' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, base)
	if base == "" {
		base = "def"
	}
	name := base
	for i := 2; slices.Contains(p.defOrder, name); i++ {
		name = fmt.Sprintf("%s_%d", base, i)
	}
	p.defNames[ref] = name
	p.defSrc[name] = target
	p.defOrder = append(p.defOrder, name)
	return name
}

// pointer resolves a local reference in the caller's schema.
func (p *projector) pointer(ref string) (any, bool) {
	frag, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil, false
	}
	if f, err := url.PathUnescape(frag); err == nil {
		frag = f
	}
	cur := p.root
	if frag == "" {
		return cur, true
	}
	if frag[0] != '/' {
		return nil, false // an anchor
	}
	for _, tok := range strings.Split(frag[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := cur.(type) {
		case *object:
			next, ok := c.get(tok)
			if !ok {
				return nil, false
			}
			cur = next
		case []any:
			var i int
			if _, err := fmt.Sscanf(tok, "%d", &i); err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// resolved is s with its $ref followed, as a schema to merge.
func (p *projector) resolved(path string, s *object, depth int) *object {
	for s.has("$ref") && depth < 32 {
		ref, _ := s.vals["$ref"].(string)
		target, ok := p.pointer(ref)
		if !ok {
			p.fail(fmt.Sprintf("%s's $ref %q is not to a place in the schema itself", where(path), ref))
			return newObject()
		}
		rest := s.clone()
		rest.del("$ref")
		t, ok := target.(*object)
		if !ok {
			if target == true {
				t = newObject()
			} else {
				p.fail(where(path) + " refers to a schema that takes no value")
				return newObject()
			}
		}
		s = p.mergeTwo(path, rest, t)
		depth++
	}
	return s
}

// merged is s with its allOf merged in: a decision where two branches say
// different things of one keyword, the first's is sent (wider; coda's
// check holds the rest).
func (p *projector) merged(path string, s *object, depth int) *object {
	if depth > 16 {
		p.fail(where(path) + "'s allOf nests too deep to merge")
		return s
	}
	list, ok := s.vals["allOf"].([]any)
	if !ok {
		p.fail(where(path) + "'s allOf is not a list of schemas")
		return s
	}
	out := s.clone()
	out.del("allOf")
	for _, b := range list {
		bo, ok := b.(*object)
		if !ok {
			if b == true {
				continue
			}
			p.fail(where(path) + "'s allOf takes no value")
			return out
		}
		bo = p.resolved(path, bo, 0)
		if bo.has("allOf") {
			bo = p.merged(path, bo, depth+1)
		}
		out = p.mergeTwo(path, out, bo)
	}
	return out
}

// mergeTwo is the schema both a and b describe, as near as one schema
// says it.
func (p *projector) mergeTwo(path string, a, b *object) *object {
	out := a.clone()
	for _, k := range b.keys {
		bv := b.vals[k]
		av, has := out.get(k)
		if !has {
			out.set(k, bv)
			continue
		}
		switch k {
		case "properties":
			ap, _ := av.(*object)
			bp, _ := bv.(*object)
			if ap == nil || bp == nil {
				continue
			}
			merged := ap.clone()
			for _, name := range bp.keys {
				x, ok := merged.get(name)
				xo, xok := x.(*object)
				yo, yok := bp.vals[name].(*object)
				switch {
				case !ok:
					merged.set(name, bp.vals[name])
				case xok && yok && !same(x, bp.vals[name]):
					merged.set(name, p.mergeTwo(path, p.resolved(path, xo, 0), p.resolved(path, yo, 0)))
				}
			}
			out.set(k, merged)
		case "required":
			list, _ := av.([]any)
			list = slices.Clone(list)
			more, _ := bv.([]any)
			for _, r := range more {
				if !slices.Contains(list, r) {
					list = append(list, r)
				}
			}
			out.set(k, list)
		case "type":
			at, bt := typesOf(out), typesOf(b)
			var both []any
			for _, t := range at {
				switch {
				case slices.Contains(bt, t):
					both = append(both, t)
				case t == "number" && slices.Contains(bt, "integer"):
					both = append(both, "integer")
				case t == "integer" && slices.Contains(bt, "number"):
					both = append(both, "integer")
				}
			}
			if len(both) == 0 {
				p.fail(where(path) + "'s allOf names types that exclude each other")
				return out
			}
			if len(both) == 1 {
				out.set(k, both[0])
			} else {
				out.set(k, both)
			}
		case "additionalProperties":
			if av == false || av == true || isEmpty(av) {
				out.set(k, bv) // an open map's schema stays open: it is checked as one
			}
		}
	}
	return out
}
