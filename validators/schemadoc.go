package validators

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dlclark/regexp2/v2"
)

// A schema document is read before the library compiles it (DESIGN §20):
// coda walks it the way a validator does, only through the keywords that
// hold subschemas, so that
//
//   - "type" is linted only where it is a keyword: inside x-* extensions,
//     examples, default, const, enum or any keyword coda does not know it
//     is data, and so is everything else there;
//   - a local $ref to a JSON Pointer the library cannot follow (one that
//     passes through a keyword it does not know: "#/port",
//     "#/components/schemas/a") is given the schema it names, copied under
//     the root's $defs;
//   - an ECMA-262 pattern Go's regexp cannot compile (lookahead,
//     backreferences) is checked by regexp2 in its ECMAScript mode, through
//     a format of coda's own; so is a patternProperties name
//     (schemaobject.go);
//   - {"enum": []} accepts nothing (the library reads it as no enum);
//   - the format names in use are collected, so that each is asserted or
//     left an annotation (schemaFormats).

// applicators are the keywords whose value is a subschema, by shape.
var (
	oneSubschema = map[string]bool{
		"additionalItems": true, "additionalProperties": true, "contains": true, "contentSchema": true,
		"else": true, "if": true, "not": true, "propertyNames": true, "then": true,
		"unevaluatedItems": true, "unevaluatedProperties": true,
	}
	subschemaMap = map[string]bool{
		"$defs": true, "definitions": true, "dependentSchemas": true, "patternProperties": true, "properties": true,
		"dependencies": true, // draft 7 and before: a subschema or an array of names
	}
	subschemaList = map[string]bool{"allOf": true, "anyOf": true, "oneOf": true, "prefixItems": true}
	// "items" is a subschema, or a list of them before 2020-12.
)

// libraryFollows are the keywords a JSON Pointer in a $ref may pass
// through for the library to resolve it (kaptinlin's resolveJSONPointer);
// true for those followed by a name or an index.
var libraryFollows = map[string]bool{
	"properties": true, "patternProperties": true, "$defs": true, "definitions": true, "dependentSchemas": true,
	"prefixItems": true, "allOf": true, "anyOf": true, "oneOf": true,
	"not": false, "if": false, "then": false, "else": false, "items": false, "contains": false,
	"additionalProperties": false, "propertyNames": false, "unevaluatedItems": false,
	"unevaluatedProperties": false, "contentSchema": false,
}

// ecmaPrefix names the formats coda registers for ECMA-262 patterns: the
// format "ecma-262 pattern " + P checks a string against P.
const ecmaPrefix = "ecma-262 pattern "

// hoistPrefix names the $defs a hoisted $ref target is copied to.
const hoistPrefix = "coda-ref-"

// A preparedSchema is a schema document as the library is given it.
type preparedSchema struct {
	doc      []byte                     // the document to compile
	formats  map[string]bool            // every "format" named
	patterns map[string]*regexp2.Regexp // ECMA-262 patterns, by their format name
	objects  map[string]*ecmaObject     // ECMA-262 patternProperties, by their format name
}

// prepareSchema reads src (valid JSON with no key twice) and returns what
// the library compiles, or why the schema is wrong.
func prepareSchema(src []byte) (*preparedSchema, error) {
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.UseNumber() // numbers written back as they were
	var root any
	if err := dec.Decode(&root); err != nil {
		return nil, fmt.Errorf("the schema is not JSON: %v", err)
	}
	p := &preparedSchema{formats: map[string]bool{}, patterns: map[string]*regexp2.Regexp{}, objects: map[string]*ecmaObject{}}
	w := &schemaWalk{p: p, root: root, hoisted: map[string]string{}, unevaluated: bytes.Contains(src, []byte(`"unevaluatedProperties"`))}
	w.walk(root, nil, true)
	// Hoisted copies are schemas too, and may hoist in turn.
	for i := 0; i < len(w.queue); i++ {
		h := w.queue[i]
		w.walk(h.value, []string{w.defs(), h.name}, true)
	}
	if w.err != nil {
		return nil, w.err
	}
	if !w.changed && len(w.queue) == 0 {
		p.doc = src
		return p, nil
	}
	if len(w.queue) > 0 {
		obj := root.(map[string]any) // only an object root hoists
		defs, _ := obj[w.defs()].(map[string]any)
		if defs == nil {
			defs = map[string]any{}
			obj[w.defs()] = defs
		}
		for _, h := range w.queue {
			defs[h.name] = h.value
		}
	}
	b, err := json.Marshal(root)
	if err != nil {
		return nil, fmt.Errorf("the schema cannot be prepared: %v", err)
	}
	p.doc = b
	return p, nil
}

type hoist struct {
	name  string
	value any
}

type schemaWalk struct {
	p       *preparedSchema
	root    any
	changed bool              // the document was rewritten
	hoisted map[string]string // JSON Pointer → its $defs name
	queue   []hoist
	named   int   // the last number a copy's name took
	err     error // the first problem found
	// unevaluated: the document names unevaluatedProperties somewhere
	unevaluated bool
}

func (w *schemaWalk) fail(format string, args ...any) {
	if w.err == nil {
		w.err = fmt.Errorf(format, args...)
	}
}

// walk visits the schema v found at path. rootResource is false inside an
// embedded resource (a subschema with its own $id), where "#/…" names a
// place in that resource, not in the document.
func (w *schemaWalk) walk(v any, path []string, rootResource bool) {
	s, ok := v.(map[string]any)
	if !ok {
		return // a boolean schema, or not a schema at all
	}
	if len(path) > 0 {
		if id, _ := s["$id"].(string); id != "" && !strings.HasPrefix(id, "#") {
			rootResource = false
		}
		if id, _ := s["id"].(string); id != "" && !strings.HasPrefix(id, "#") {
			rootResource = false
		}
	}
	at := func(k string) string { return cmp.Or(pointer(append(slices.Clip(path), k)), "(root)") }
	w.ecmaObject(s, at("patternProperties"))

	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		x := s[k]
		switch {
		case k == "type":
			names, _ := x.([]any)
			if n, ok := x.(string); ok {
				names = []any{n}
			}
			for _, n := range names {
				if n, ok := n.(string); ok && !slices.Contains(jsonTypes, n) {
					w.fail("the schema's \"type\" at %s is %q, which is not a JSON type (%s)", at(k), n, strings.Join(jsonTypes, ", "))
				}
			}
		case k == "format":
			if f, ok := x.(string); ok {
				w.p.formats[f] = true
			}
		case k == "pattern":
			if pat, ok := x.(string); ok {
				w.pattern(s, pat, at(k))
			}
		case k == "enum":
			if e, ok := x.([]any); ok && len(e) == 0 {
				// The library reads an empty enum as none: what it means
				// is that no value is allowed.
				all, _ := s["allOf"].([]any)
				s["allOf"] = append(slices.Clip(all), false)
				w.changed = true
			}
		case k == "$ref":
			if ref, ok := x.(string); ok && rootResource {
				if to, ok := w.ref(ref); ok {
					s[k] = to
					w.changed = true
				}
			}
		case k == "items":
			if list, ok := x.([]any); ok {
				for i, y := range list {
					w.walk(y, append(slices.Clip(path), k, strconv.Itoa(i)), rootResource)
				}
			} else {
				w.walk(x, append(slices.Clip(path), k), rootResource)
			}
		case oneSubschema[k]:
			w.walk(x, append(slices.Clip(path), k), rootResource)
		case subschemaMap[k]:
			m, _ := x.(map[string]any)
			names := make([]string, 0, len(m))
			for n := range m {
				names = append(names, n)
			}
			slices.Sort(names)
			for _, n := range names {
				w.walk(m[n], append(slices.Clip(path), k, n), rootResource)
			}
		case subschemaList[k]:
			list, _ := x.([]any)
			for i, y := range list {
				w.walk(y, append(slices.Clip(path), k, strconv.Itoa(i)), rootResource)
			}
		}
	}
}

// pattern keeps a pattern Go's regexp compiles, and hands one it cannot
// to regexp2, in its ECMAScript mode, through a format of coda's own: the
// pattern leaves the schema s and an allOf checks the format instead.
func (w *schemaWalk) pattern(s map[string]any, pat, at string) {
	if _, err := regexp.Compile(pat); err == nil {
		return
	}
	re, err := compileECMA(pat)
	if err != nil {
		w.fail("the schema's pattern at %s, %q, is not a regular expression: %s", at, pat, oneLine(err.Error()))
		return
	}
	name := ecmaPrefix + pat
	w.p.patterns[name] = re
	delete(s, "pattern")
	all, _ := s["allOf"].([]any)
	s["allOf"] = append(slices.Clip(all), map[string]any{"format": name})
	w.changed = true
}

// ecmaMatchTimeout bounds one match of an ECMA-262 pattern: regexp2
// backtracks, and a pattern can take exponential time on a crafted string.
// A match that runs out is a mismatch.
const ecmaMatchTimeout = 2 * time.Second

// compileECMA compiles an ECMA-262 pattern.
func compileECMA(pat string) (*regexp2.Regexp, error) {
	re, err := regexp2.Compile(pat, regexp2.ECMAScript)
	if err != nil {
		return nil, err
	}
	re.MatchTimeout = ecmaMatchTimeout
	return re, nil
}

// ref returns what a local $ref should say instead, when the library could
// not follow its JSON Pointer but the document holds a schema there: the
// name of a copy of that schema under the root's $defs.
func (w *schemaWalk) ref(ref string) (string, bool) {
	frag, ok := strings.CutPrefix(ref, "#")
	if !ok || !strings.HasPrefix(frag, "/") {
		return "", false
	}
	if name, ok := w.hoisted[frag]; ok {
		return "#/" + w.defs() + "/" + name, true
	}
	unescaped, err := url.PathUnescape(frag)
	if err != nil {
		return "", false
	}
	tokens := strings.Split(unescaped[1:], "/")
	for i, t := range tokens {
		tokens[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	if libraryResolves(w.root, tokens) {
		return "", false
	}
	target, ok := lookup(w.root, tokens)
	if !ok {
		return "", false // the library says it does not resolve
	}
	if _, isObj := target.(map[string]any); !isObj {
		if _, isBool := target.(bool); !isBool {
			return "", false // not a schema: the library says so
		}
	}
	if _, isObj := w.root.(map[string]any); !isObj {
		return "", false
	}
	if defs, ok := w.root.(map[string]any)[w.defs()]; ok {
		if _, isObj := defs.(map[string]any); !isObj {
			return "", false
		}
	}
	existing, _ := w.root.(map[string]any)[w.defs()].(map[string]any)
	name := ""
	for {
		w.named++
		if name = hoistPrefix + strconv.Itoa(w.named); existing[name] == nil {
			break
		}
	}
	w.hoisted[frag] = name
	w.queue = append(w.queue, hoist{name: name, value: deepCopy(target)})
	return "#/" + w.defs() + "/" + name, true
}

// defs is the root's keyword for definitions: the library reads one of
// $defs and definitions, so copies join the one the document uses.
func (w *schemaWalk) defs() string {
	root, _ := w.root.(map[string]any)
	if _, ok := root["$defs"]; !ok {
		if _, ok := root["definitions"]; ok {
			return "definitions"
		}
	}
	return "$defs"
}

// libraryResolves reports whether the library's own walk from the root
// reaches tokens: only through applicator keywords, as it compiles them.
func libraryResolves(root any, tokens []string) bool {
	v := root
	for i := 0; i < len(tokens); i++ {
		s, ok := v.(map[string]any)
		if !ok {
			return false
		}
		named, follows := libraryFollows[tokens[i]]
		if !follows {
			return false
		}
		if _, both := s["$defs"]; both && tokens[i] == "definitions" {
			return false // the library keeps $defs and drops definitions
		}
		x, ok := s[tokens[i]]
		if !ok {
			return false
		}
		if _, isList := x.([]any); isList && tokens[i] == "items" {
			named = true // items as a list, before 2020-12
		}
		if named {
			i++
			if i == len(tokens) {
				return false
			}
			var ok bool
			if x, ok = lookup(x, tokens[i:i+1]); !ok {
				return false
			}
		}
		v = x
	}
	return true
}

// lookup follows unescaped JSON Pointer tokens through a decoded document.
func lookup(v any, tokens []string) (any, bool) {
	for _, t := range tokens {
		switch x := v.(type) {
		case map[string]any:
			y, ok := x[t]
			if !ok {
				return nil, false
			}
			v = y
		case []any:
			i, err := strconv.Atoi(t)
			if err != nil || i < 0 || i >= len(x) || strconv.Itoa(i) != t {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, y := range x {
			m[k] = deepCopy(y)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, y := range x {
			l[i] = deepCopy(y)
		}
		return l
	}
	return v
}
