package validators

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/kaptinlin/jsonschema"
)

// A Schema is a compiled JSON Schema. It is safe for concurrent use.
type Schema struct {
	// mu serialises validations: kaptinlin compiles a "pattern" the first
	// time it checks one and a "patternProperties" every time, writing
	// into the compiled schema.
	mu sync.Mutex
	s  *jsonschema.Schema
	// objects are the patternProperties coda checks itself (schemaobject.go)
	objects map[string]*ecmaObject
}

// A Violation is one way the data breaks the schema.
type Violation struct {
	// Pointer is the absolute JSON Pointer (RFC 6901) of the offending
	// value: "" for the root, "/items/0/name", with "~" and "/" in names
	// escaped as "~0" and "~1".
	Pointer string
	Message string
}

// errNoNetwork is what the http and https loaders answer: coda never
// fetches a schema.
func errNoNetwork(url string) (io.ReadCloser, error) {
	return nil, fmt.Errorf("schemas are never fetched over the network (%s)", url)
}

// SchemaOptions are how a spec asks for its schema to be checked. The zero
// value is coda's default.
type SchemaOptions struct {
	// NoFormatAssertion makes "format" an annotation, as the drafts
	// themselves have it; by default the formats the providers' strict
	// modes know are asserted (assert_format, DESIGN §20).
	NoFormatAssertion bool
}

// CompileSchemaWith compiles a JSON Schema (drafts 2020-12, 2019-09, 7, 6
// and 4) as opts ask (their zero value asserts format). Nothing is ever
// fetched: a $ref to a draft's metaschema resolves to the bundled copy, and
// a $ref to any other http or https address, like any other $ref that does
// not resolve inside the schema, is a compile error. The error is one
// line, fit for a start-up failure or a warning.
func CompileSchemaWith(src []byte, opts SchemaOptions) (*Schema, error) {
	if !json.Valid(src) {
		return nil, fmt.Errorf("the schema is not JSON: %v", diagnoseJSON(string(src)))
	}
	if e := jsonDuplicateKey(string(src)); e != nil {
		return nil, fmt.Errorf("the schema is not one JSON Schema: %v", e)
	}
	p, err := prepareSchema(src)
	if err != nil {
		return nil, err
	}
	s, err := compileKaptinlin(p, opts)
	if err != nil {
		return nil, err
	}
	for _, o := range p.objects {
		if err := o.bind(s, p.objects); err != nil {
			return nil, err
		}
	}
	return &Schema{s: s, objects: p.objects}, nil
}

// compileKaptinlin compiles a prepared schema, no loader reaching the
// network: only the bundled metaschemas load.
func compileKaptinlin(p *preparedSchema, opts SchemaOptions) (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	for scheme := range c.Loaders {
		c.RegisterLoader(scheme, errNoNetwork)
	}
	c.RegisterLoader("http", loadMetaschema)
	c.RegisterLoader("https", loadMetaschema)
	registerFormats(c, p, opts)
	s, err := c.Compile(p.doc)
	if err != nil {
		return nil, fmt.Errorf("the schema does not compile: %s", oneLine(err.Error()))
	}
	if refs := s.UnresolvedReferenceURIs(); len(refs) > 0 {
		return nil, fmt.Errorf("the schema's $ref %q does not resolve (schemas are never fetched over the network: define it under $defs)", refs[0])
	}
	annotateContent(s, map[*jsonschema.Schema]bool{})
	return s, nil
}

// annotateContent makes the content vocabulary (contentEncoding,
// contentMediaType, contentSchema) the annotation the drafts make it: the
// library asserts it.
func annotateContent(s *jsonschema.Schema, seen map[*jsonschema.Schema]bool) {
	if s == nil || seen[s] {
		return
	}
	seen[s] = true
	sub := s.ContentSchema
	s.ContentEncoding, s.ContentMediaType, s.ContentSchema = nil, nil, nil
	for _, x := range []*jsonschema.Schema{s.Not, s.If, s.Then, s.Else, s.Items, s.AdditionalProperties, s.Contains,
		s.PropertyNames, s.UnevaluatedItems, s.UnevaluatedProperties, sub} {
		annotateContent(x, seen)
	}
	for _, l := range [][]*jsonschema.Schema{s.AllOf, s.AnyOf, s.OneOf, s.PrefixItems} {
		for _, x := range l {
			annotateContent(x, seen)
		}
	}
	for _, m := range []map[string]*jsonschema.Schema{s.Defs, s.DependentSchemas} {
		for _, x := range m {
			annotateContent(x, seen)
		}
	}
	for _, m := range []*jsonschema.SchemaMap{s.Properties, s.PatternProperties} {
		if m != nil {
			for _, x := range *m {
				annotateContent(x, seen)
			}
		}
	}
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", "; ")), " ")
}

var jsonTypes = []string{"array", "boolean", "integer", "null", "number", "object", "string"}

// Validate checks data (as Decode returns it) against the schema and
// returns every violation, the most specific ones only, ordered by
// pointer. Nil means the data conforms.
func (s *Schema) Validate(data any) []Violation {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.s.Validate(data)
	if r.IsValid() {
		return nil
	}
	var vs []Violation
	collect(r, nil, data, true, s.objects, &vs)
	if len(vs) == 0 { // never hide a failure, however the library words it
		vs = append(vs, Violation{Message: "the value does not match the schema"})
	}
	slices.SortStableFunc(vs, func(a, b Violation) int {
		if c := comparePointers(a.Pointer, b.Pointer); c != 0 {
			return c
		}
		return strings.Compare(a.Message, b.Message)
	})
	return slices.CompactFunc(vs, func(a, b Violation) bool { return a == b })
}

// aggregate keywords only say that a subschema failed; the subschema's own
// results carry the detail, so they are dropped when such results exist.
var aggregate = map[string]bool{
	"properties": true, "patternProperties": true, "additionalProperties": true,
	"items": true, "prefixItems": true, "unevaluatedItems": true, "unevaluatedProperties": true,
	"$ref": true, "$dynamicRef": true, "allOf": true, "then": true, "else": true,
	"dependentSchemas": true, "propertyNames": true,
}

// collect walks an evaluation result, whose instance locations are relative
// to their parent's, gathering leaf violations with absolute pointers.
// value is the instance at path; exists is false for a property the data
// lacks (the library evaluates a missing required property as null, which
// "required" already reports).
// objects explain the failures of coda's patternProperties formats.
func collect(r *jsonschema.EvaluationResult, path []string, value any, exists bool, objects map[string]*ecmaObject, out *[]Violation) {
	if r.IsValid() {
		return
	}
	if r.InstanceLocation != "" {
		seg := r.InstanceLocation[1:]
		path = append(slices.Clip(path), seg)
		value, exists = child(value, seg)
		if !exists {
			return
		}
	}
	ptr := pointer(path)

	var details []*jsonschema.EvaluationResult
	var branches []string // what each failed anyOf/oneOf branch says
	for _, d := range r.Details {
		switch ep := d.EvaluationPath; {
		case d.IsValid(), ep == "/if", strings.HasPrefix(ep, "/not"), strings.HasPrefix(ep, "/contains"):
			// an "if" that fails is a branch taken, not a violation
		case strings.HasPrefix(ep, "/anyOf/"), strings.HasPrefix(ep, "/oneOf/"):
			var sub []Violation
			collect(d, path, value, exists, objects, &sub)
			for _, v := range sub {
				at := ""
				if v.Pointer != ptr {
					at = v.Pointer + ": "
				}
				branches = append(branches, at+v.Message)
			}
		default:
			details = append(details, d)
		}
	}

	keys := make([]string, 0, len(r.Errors))
	for k := range r.Errors {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if aggregate[k] && len(details) > 0 {
			continue
		}
		e := r.Errors[k]
		msg := e.Error()
		f, _ := e.Params["format"].(string)
		if k == "format" && strings.HasPrefix(f, ecmaPrefix) {
			// coda's own format for an ECMA-262 pattern: worded as the
			// library words a pattern
			msg = "Value does not match the required pattern " + strings.TrimPrefix(f, ecmaPrefix)
		}
		if o := objects[f]; k == "format" && o != nil {
			// coda's own patternProperties: what each property broke
			if vs := o.explain(value); len(vs) > 0 {
				for _, v := range vs {
					*out = append(*out, Violation{Pointer: ptr + v.Pointer, Message: v.Message})
				}
				continue
			}
		}
		switch {
		case k == "schema": // a false schema: say what it forbids
			msg = falseSchema(r.EvaluationPath, path)
		case (k == "anyOf" || k == "oneOf") && len(branches) > 0:
			slices.Sort(branches)
			branches = slices.Compact(branches)
			if len(branches) > 3 {
				branches = append(branches[:3], "…")
			}
			msg += " (" + strings.Join(branches, "; or ") + ")"
		}
		*out = append(*out, Violation{Pointer: ptr, Message: msg})
	}
	for _, d := range details {
		collect(d, path, value, exists, objects, out)
	}
}

// falseSchema words the failure of a false schema from where it sits.
func falseSchema(evalPath string, path []string) string {
	name := ""
	if len(path) > 0 {
		name = path[len(path)-1]
	}
	switch {
	case strings.HasPrefix(evalPath, "/additionalProperties"), strings.HasPrefix(evalPath, "/unevaluatedProperties"),
		strings.HasPrefix(evalPath, "/patternProperties"):
		return fmt.Sprintf("property %q is not allowed here", name)
	case strings.HasPrefix(evalPath, "/items"), strings.HasPrefix(evalPath, "/unevaluatedItems"),
		strings.HasPrefix(evalPath, "/prefixItems"):
		return "no item is allowed at this position"
	case strings.HasPrefix(evalPath, "/properties"):
		return fmt.Sprintf("property %q is not allowed", name)
	}
	return "no value is allowed here"
}

// child returns the member seg of an object or array value.
func child(v any, seg string) (any, bool) {
	switch v := v.(type) {
	case map[string]any:
		x, ok := v[seg]
		return x, ok
	case []any:
		i, err := strconv.Atoi(seg)
		if err != nil || i < 0 || i >= len(v) {
			return nil, false
		}
		return v[i], true
	}
	return nil, true // a type the walk does not know: keep what the library says
}

var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// pointer joins unescaped reference tokens into a JSON Pointer.
func pointer(path []string) string {
	var b strings.Builder
	for _, seg := range path {
		b.WriteByte('/')
		pointerEscaper.WriteString(&b, seg)
	}
	return b.String()
}

// comparePointers orders pointers token by token, array indexes by value.
func comparePointers(a, b string) int {
	for a != "" && b != "" {
		var ta, tb string
		ta, a = nextToken(a)
		tb, b = nextToken(b)
		na, ea := strconv.Atoi(ta)
		nb, eb := strconv.Atoi(tb)
		if ea == nil && eb == nil {
			if c := cmp.Compare(na, nb); c != 0 {
				return c
			}
		} else if c := strings.Compare(ta, tb); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a), len(b))
}

func nextToken(p string) (tok, rest string) {
	p = p[1:]
	if i := strings.IndexByte(p, '/'); i >= 0 {
		return p[:i], p[i:]
	}
	return p, ""
}

// FormatViolations lists violations one per line, "pointer: message" (the
// root shown as "(root)"), at most max lines (no cap when max <= 0) and then
// "... and N more (M in all)".
func FormatViolations(vs []Violation, max int) string {
	var b strings.Builder
	for i, v := range vs {
		if max > 0 && i == max {
			fmt.Fprintf(&b, "... and %d more (%d in all)\n", len(vs)-max, len(vs))
			break
		}
		p := v.Pointer
		if p == "" {
			p = "(root)"
		}
		fmt.Fprintf(&b, "%s: %s\n", p, v.Message)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
