package validators

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"

	"github.com/dlclark/regexp2/v2"
	"github.com/kaptinlin/jsonschema"
)

// The library compiles patternProperties' names with Go's regexp, which
// refuses ECMA-262 lookaround and backreferences. A schema whose
// patternProperties name one is checked partly by coda: those entries, and
// the additionalProperties that depend on which names they match, leave
// the schema for its definitions (where the library still compiles them in
// their document), and a format of coda's own on the object applies them.

// ecmaObjectPrefix names the formats that stand for such an object's
// patternProperties.
const ecmaObjectPrefix = "ecma-262 patternProperties "

// An ecmaObject is what one schema's patternProperties and
// additionalProperties say, checked by coda.
type ecmaObject struct {
	properties map[string]bool  // the names "properties" gives
	goPatterns []*regexp.Regexp // patternProperties the library still checks
	ecma       []ecmaProperty
	additional string // the definition holding additionalProperties; "" when none
	noneMore   bool   // additionalProperties is false

	defs map[string]*jsonschema.Schema // the compiled definitions, set after compiling
	all  map[string]*ecmaObject        // the document's others, for nested ones
}

type ecmaProperty struct {
	pattern string
	re      *regexp2.Regexp
	def     string // the definition holding its schema
}

// ecmaObject takes the ECMA-262 entries out of the schema s's
// patternProperties, and its additionalProperties with them, and returns
// the format that checks them instead; "" when s has none.
func (w *schemaWalk) ecmaObject(s map[string]any, at string) string {
	pp, _ := s["patternProperties"].(map[string]any)
	var names []string
	for n := range pp {
		if _, err := regexp.Compile(n); err != nil {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return ""
	}
	slices.Sort(names)
	if w.unevaluated {
		// unevaluatedProperties would not see which names coda's format
		// matched: refuse rather than check it wrong.
		w.fail("the schema's patternProperties at %s names %q, an ECMA-262 pattern Go's regexp cannot compile, in a schema that uses unevaluatedProperties: coda cannot check the two together", at, names[0])
		return ""
	}
	o := &ecmaObject{properties: map[string]bool{}}
	if props, ok := s["properties"].(map[string]any); ok {
		for n := range props {
			o.properties[n] = true
		}
	}
	for n := range pp {
		if re, err := regexp.Compile(n); err == nil {
			o.goPatterns = append(o.goPatterns, re)
		}
	}
	for _, n := range names {
		re, err := compileECMA(n)
		if err != nil {
			w.fail("the schema's patternProperties at %s names %q, which is not a regular expression: %v", at, n, oneLine(err.Error()))
			return ""
		}
		def, ok := w.define(pp[n])
		if !ok {
			w.fail("the schema's patternProperties at %s names %q, an ECMA-262 pattern, and coda has nowhere to keep its schema (the root is not an object with definitions)", at, n)
			return ""
		}
		o.ecma = append(o.ecma, ecmaProperty{pattern: n, re: re, def: def})
		delete(pp, n)
	}
	if a, ok := s["additionalProperties"]; ok {
		if b, isBool := a.(bool); isBool && !b {
			o.noneMore = true
		} else if def, ok := w.define(a); ok {
			o.additional = def
		} else {
			w.fail("the schema's additionalProperties at %s depend on an ECMA-262 patternProperties name, and coda has nowhere to keep them", at)
			return ""
		}
		delete(s, "additionalProperties")
	}
	name := ecmaObjectPrefix + strconv.Itoa(len(w.p.objects)+1)
	w.p.objects[name] = o
	all, _ := s["allOf"].([]any)
	s["allOf"] = append(slices.Clip(all), map[string]any{"format": name})
	w.changed = true
	return name
}

// define moves a schema under the root's definitions, where it is walked
// and compiled in its document, and returns its name there.
func (w *schemaWalk) define(schema any) (string, bool) {
	root, ok := w.root.(map[string]any)
	if !ok {
		return "", false
	}
	if defs, ok := root[w.defs()]; ok {
		if _, isObj := defs.(map[string]any); !isObj {
			return "", false
		}
	}
	existing, _ := root[w.defs()].(map[string]any)
	name := ""
	for {
		w.named++
		if name = hoistPrefix + strconv.Itoa(w.named); existing[name] == nil {
			break
		}
	}
	w.queue = append(w.queue, hoist{name: name, value: schema})
	return name, true
}

// bind finds the compiled definitions the object's checks use; all are
// the document's objects.
func (o *ecmaObject) bind(root *jsonschema.Schema, all map[string]*ecmaObject) error {
	o.defs, o.all = map[string]*jsonschema.Schema{}, all
	need := []string{}
	for _, e := range o.ecma {
		need = append(need, e.def)
	}
	if o.additional != "" {
		need = append(need, o.additional)
	}
	for _, n := range need {
		d := root.Defs[n]
		if d == nil {
			return fmt.Errorf("the schema's ECMA-262 patternProperties could not be prepared (%s is missing)", n)
		}
		o.defs[n] = d
	}
	return nil
}

// check is the format: whether the object v satisfies the entries.
func (o *ecmaObject) check(v any) bool { return len(o.explain(v)) == 0 }

// explain lists how the object v breaks the entries, with pointers
// relative to it.
func (o *ecmaObject) explain(v any) []Violation {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var out []Violation
	against := func(k, def string) {
		r := o.defs[def].Validate(obj[k])
		if r.IsValid() {
			return
		}
		var vs []Violation
		collect(r, []string{k}, obj[k], true, o.all, &vs)
		if len(vs) == 0 {
			vs = append(vs, Violation{Pointer: pointer([]string{k}), Message: "the value does not match the schema"})
		}
		out = append(out, vs...)
	}
	for _, k := range keys {
		additional := !o.properties[k]
		for _, re := range o.goPatterns {
			if re.MatchString(k) {
				additional = false
			}
		}
		for _, e := range o.ecma {
			if m, err := e.re.MatchString(k); err == nil && m {
				additional = false
				against(k, e.def)
			}
		}
		switch {
		case !additional:
		case o.noneMore:
			out = append(out, Violation{Pointer: pointer([]string{k}), Message: fmt.Sprintf("property %q is not allowed here", k)})
		case o.additional != "":
			against(k, o.additional)
		}
	}
	return out
}
