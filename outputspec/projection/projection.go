// Package projection derives, from a caller's JSON Schema, the schema a
// provider family's strict mode takes (DESIGN §17, "a strict projection"),
// and undoes on an answer what the projection added. It imports only the
// standard library: the providers' fakes and `coda validate` read it
// without the schema checker.
//
// A projection is never narrower than the caller's schema where an answer
// could need it: every object is closed (a member the schema does not name
// is not one an answer needs), every property required with the optional
// ones made nullable (a null coda introduced is removed again, Back),
// oneOf sent as anyOf, allOf merged, older drafts' idioms translated
// (definitions, boolean exclusiveMinimum and exclusiveMaximum, $schema and
// id left out), and the keywords a family does not take left out and said
// in the field's description instead. What it leaves out makes it wider,
// never narrower: coda checks every answer against the caller's own
// schema (outputspec's check) and repairs it as always. Where no faithful
// projection exists (an open map, any value where the family cannot say
// it, a recursive schema where the family takes none, a documented limit
// passed) Project says why, and the schema is sent as before: not strict.
//
// The families' documented subsets and limits:
//
//   - OpenAI (developers.openai.com/api/docs/guides/structured-outputs,
//     "Supported schemas"; the same for strict function tools and
//     text.format / response_format json_schema): string, number,
//     integer, boolean, object, array, null, enum, const, anyOf (not at a
//     reply's root, which is an object); every object's
//     additionalProperties false and every property required ("emulate an
//     optional parameter by using a union type with null"); $defs and
//     $ref, recursion allowed; string pattern and format (date-time, time,
//     date, duration, email, hostname, ipv4, ipv6, uuid); number
//     multipleOf, maximum, exclusiveMaximum, minimum, exclusiveMinimum;
//     array minItems, maxItems. "Not supported": allOf, not,
//     dependentRequired, dependentSchemas, if, then, else; "'default' is
//     not permitted". Limits: "up to 5000 object properties total, with up
//     to 10 levels of nesting"; "total string length of all property
//     names, definition names, enum values, and const values cannot exceed
//     120,000 characters"; "up to 1000 enum values across all enum
//     properties"; "for a single enum property with string values, the
//     total string length of all enum values cannot exceed 15,000
//     characters when there are more than 250 enum values".
//   - Anthropic (platform.claude.com/docs/en/build-with-claude/
//     structured-outputs, "JSON Schema limitations", which strict tool use
//     shares): the basic types, enum of strings, numbers, booleans or
//     nulls, const, anyOf, allOf (not with $ref), local $ref / $defs /
//     definitions, default, required, additionalProperties false on every
//     object (optional properties allowed), string formats (date-time,
//     time, date, duration, email, hostname, uri, ipv4, ipv6, uuid), array
//     minItems 0 or 1, simple patterns (no backreferences, lookaround or
//     word boundaries). "Not supported": recursive schemas, numerical
//     constraints, string length constraints, other array constraints.
//     Limits (the same page's complexity limits, and the API's 400s:
//     "Schemas contains too many optional parameters (N) ... limit: 24",
//     "too many parameters with union types ... limit: 16"), counted over
//     every strict schema of a request, submit_output's own members
//     included: 24 optional properties, 16 parameters with a union (anyOf
//     or a list of types).
package projection

import (
	"encoding/json"
	"fmt"
)

// Families, by the names outputspec and the providers give them.
const (
	OpenAI    = "openai"
	Anthropic = "anthropic"
)

// A family is what one provider family's strict mode takes.
type family struct {
	name        string // "OpenAI's", for what coda says
	allRequired bool   // every property required: optional ones nullable
	formats     []string
	numeric     bool // minimum, maximum, exclusive*, multipleOf
	arrayBounds bool // minItems, maxItems; else minItems 0 or 1 only
	simpleRegex bool // no backreferences, lookaround, word boundaries
	recursion   bool
	defaults    bool // default is taken (an annotation either way)
	enumComplex bool // enum values may be objects or arrays

	maxDepth      int // levels of object nesting
	maxProperties int // object properties in all
	maxEnums      int // enum values in all
	maxChars      int // property names, definition names, enum and const strings
	maxOptional   int // properties left out of required, in all
	maxUnions     int // schemas with anyOf or a list of types, in all
}

var families = map[string]*family{
	OpenAI: {
		name: "OpenAI's", allRequired: true,
		formats: []string{"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"},
		numeric: true, arrayBounds: true, recursion: true, enumComplex: true,
		maxDepth: 10, maxProperties: 5000, maxEnums: 1000, maxChars: 120000,
	},
	Anthropic: {
		name:        "Anthropic's",
		formats:     []string{"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"},
		simpleRegex: true, defaults: true,
		maxOptional: 24, maxUnions: 16,
	},
}

// Shared are the limits family counts over a request's strict schemas
// together, optional properties and unions; 0 where it has none.
func Shared(familyName string) (optional, unions int) {
	if f, ok := families[familyName]; ok {
		return f.maxOptional, f.maxUnions
	}
	return 0, 0
}

// Families are the families Project knows, in order.
var Families = []string{OpenAI, Anthropic}

// A Budget is what of a family's limits the rest of the request uses:
// submit_output's own members around the answer's schema.
type Budget struct {
	Depth, Properties, Optional, Unions int
}

// A Projection is a caller's schema as one family's strict mode takes it.
type Projection struct {
	// Schema is what is sent, compact, its members in the caller's order.
	Schema json.RawMessage
	// Content is Schema without its $defs, to sit in another schema
	// (submit_output's content), and Defs its $defs member ("" when none),
	// for that schema's top level.
	Content json.RawMessage
	Defs    string
	// Dropped lists the keywords left out, where: each is said in its
	// field's description, and coda's own check holds it.
	Dropped []string
	// Optional and Unions are what the projection spends of the limits a
	// request's strict schemas share (Anthropic's): properties left out
	// of required, schemas with anyOf or a list of types.
	Optional, Unions int

	family *family
	root   *object
	defs   *object
	marks
}

// marks are what a projection added, by the projected schema that added
// it, for Back to undo.
type marks struct {
	// nulls are, per object schema, the properties whose null coda
	// introduced.
	nulls map[*object]map[string]bool
	// text: a string holding a JSON text, for a schema of any value.
	text map[*object]bool
	// entry: an array of {key, value} pairs, for an open map.
	entry map[*object]bool
	// extra: an object's member holding its open map's pairs.
	extra map[*object]string
}

func newMarks() marks {
	return marks{nulls: map[*object]map[string]bool{}, text: map[*object]bool{}, entry: map[*object]bool{}, extra: map[*object]string{}}
}

func (m marks) empty() bool {
	return len(m.nulls) == 0 && len(m.text) == 0 && len(m.entry) == 0 && len(m.extra) == 0
}

// Project derives family's projection of schema (JSON). reply: the schema
// is a reply format's, whose root OpenAI wants an object; budget is what
// the rest of the request takes of the family's limits. It says why there
// is none, when there is none.
func Project(schema []byte, familyName string, reply bool, budget Budget) (*Projection, string) {
	f, ok := families[familyName]
	if !ok {
		return nil, fmt.Sprintf("no strict subset is known for %q", familyName)
	}
	v, err := decode(schema)
	if err != nil {
		return nil, "the schema is not JSON"
	}
	p, why := project(v, f, f.allRequired, reply, budget)
	if why != nil && why.optional {
		// Optional properties past the family's limit: required and
		// nullable instead, which spends unions.
		if q, why2 := project(v, f, true, reply, budget); why2 == nil {
			return q, ""
		}
	}
	if why != nil {
		return nil, why.why
	}
	return p, ""
}
