package outputspec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// The answer's shape at the source (DESIGN §17): how the answer call asks
// a provider for it. `structured` on an output spec names the strongest
// mechanism a stage uses: StructuredTool (submit_output typed, strict where
// its schema fits a provider's strict subset exactly, forced when nothing
// else is left), StructuredNative (the reply itself constrained to JSON,
// for the calls whose reply is the answer), StructuredPrompted (only what
// the model is told); StructuredAuto (or "") is the strongest the model's
// API takes. Where a mechanism cannot be used, the next weaker one is.
// coda's own checks (check.go) run on every answer whatever was asked.

// Values of structured, strongest first.
const (
	StructuredAuto     = "auto"
	StructuredTool     = "tool"
	StructuredNative   = "native"
	StructuredPrompted = "prompted"
)

// StructuredModes are structured's values, strongest first.
var StructuredModes = []string{StructuredAuto, StructuredTool, StructuredNative, StructuredPrompted}

// CheckStructured says what is wrong with a structured value, or nil.
func CheckStructured(s string) error {
	if s == "" || slices.Contains(StructuredModes, s) {
		return nil
	}
	return fmt.Errorf("is %q: want \"auto\", \"tool\", \"native\" or \"prompted\"", s)
}

// StructuredRank orders the modes by strength: auto and tool 3, native 2,
// prompted 1 ("" is auto); 0 for a value that is none of them.
func StructuredRank(s string) int {
	switch s {
	case "", StructuredAuto, StructuredTool:
		return 3
	case StructuredNative:
		return 2
	case StructuredPrompted:
		return 1
	}
	return 0
}

// Structured is the contract's structured setting; "" is auto.
func (c *Contract) Structured() string { return c.spec.Structured }

// Typed reports whether submit_output's content can be the answer's own
// JSON value rather than a string holding it: a json answer.
func (c *Contract) Typed() bool { return c.format == "json" }

// A ToolShape is how submit_output's schema is written for one call.
type ToolShape struct {
	// Typed: `content` is the answer's JSON value, its schema the
	// answer's (any JSON value when there is none, or it cannot be
	// nested); a string holding the answer otherwise. Only for a json
	// answer (Contract.Typed).
	Typed bool
	// Strict is the strict subset the schema is written for, where it is
	// sent strict: StrictOpenAI has every property required, the optional
	// ones nullable (parseArgsAs takes null as absent, so this accepts what
	// the loose schema does); StrictAnthropic leaves out the lengths its
	// subset does not take (parseArgsAs holds them). "" is the loose schema.
	Strict string
}

// shape is what a json answer's schema makes of submit_output's typed
// content and of a constrained reply. Made once, at Compile.
type shape struct {
	// doc is the schema as it was written, compact; sent is the schema a
	// constrained reply is asked to satisfy: doc without its top level's
	// $schema and $id (metaless).
	doc, sent json.RawMessage
	// value is the schema decoded, for the strict fit (strict.go).
	value any
	// content is the schema as it sits at properties.content: the root's
	// members but $schema, $defs and definitions; defs are the $defs and
	// definitions members, hoisted to the tool schema's top, where the
	// schema's references ("#/$defs/...") find them. Both are "" when the
	// schema cannot be nested so, and unnested says why: content is then
	// any JSON value.
	content, defs string
	unnested      string
	// stringTop: the schema names a string at its top (type, enum, const,
	// or a branch of anyOf or oneOf), so a string content is the answer's
	// value, not a JSON text held in a string.
	stringTop bool
	// proj are its strict projections, where it does not fit a family's
	// subset as written (projected.go).
	proj projections
}

// shapeOf reads a json answer's schema, which compiled.
func shapeOf(doc []byte) shape {
	sh := shape{doc: compact(doc)}
	sh.sent = sh.doc
	if err := json.Unmarshal(doc, &sh.value); err != nil {
		sh.unnested = "the schema does not decode"
		return sh
	}
	root, _ := sh.value.(map[string]any)
	sh.stringTop = namesString(root)
	sh.sent = metaless(sh.doc, root)
	sh.unnested = unnestable(sh.value)
	sh.proj = projectAll(doc)
	if sh.unnested != "" {
		return sh
	}
	members, err := topMembers(doc)
	if err != nil {
		sh.unnested = "the schema does not decode"
		return sh
	}
	var content, defs []string
	for _, m := range members {
		switch m.key {
		case "$schema", "$id":
		case "$defs", "definitions":
			defs = append(defs, m.text())
		default:
			content = append(content, m.text())
		}
	}
	sh.content = "{" + strings.Join(content, ",") + "}"
	sh.defs = strings.Join(defs, ",")
	return sh
}

// namesString reports whether schema s names a string at its top.
func namesString(s map[string]any) bool {
	switch t := s["type"].(type) {
	case string:
		if t == "string" {
			return true
		}
	case []any:
		if slices.Contains(t, any("string")) {
			return true
		}
	}
	if _, ok := s["const"].(string); ok {
		return true
	}
	if e, ok := s["enum"].([]any); ok && slices.ContainsFunc(e, func(v any) bool { _, ok := v.(string); return ok }) {
		return true
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		branches, _ := s[k].([]any)
		for _, b := range branches {
			if m, ok := b.(map[string]any); ok && namesString(m) {
				return true
			}
		}
	}
	return false
}

// oldDraft is the $schema of root when it names draft-04 or older, whose
// keywords read otherwise than the later drafts' (and the subsets'); "".
func oldDraft(root map[string]any) string {
	if d, _ := root["$schema"].(string); strings.Contains(d, "draft-04") || strings.Contains(d, "draft-03") {
		return d
	}
	return ""
}

// metaless is the schema doc (root decoded) without its top level's
// $schema and $id, which no provider's strict subset names (generated
// schemas carry them: zod-to-json-schema writes $schema, Pydantic and
// others $id): what the schema accepts is the same without them, since
// its references, where it can be nested or sent strict, are to its own
// definitions (a "#/$defs/..." resolves in the document either way). A
// draft-04 or older schema, or one without them, is doc as written.
func metaless(doc json.RawMessage, root map[string]any) json.RawMessage {
	_, hasSchema := root["$schema"]
	_, hasID := root["$id"]
	if !hasSchema && !hasID || oldDraft(root) != "" {
		return doc
	}
	members, err := topMembers(doc)
	if err != nil {
		return doc
	}
	var kept []string
	for _, m := range members {
		if m.key != "$schema" && m.key != "$id" {
			kept = append(kept, m.text())
		}
	}
	return json.RawMessage("{" + strings.Join(kept, ",") + "}")
}

// unnestable says why schema v cannot sit inside another one unchanged in
// meaning, or "": a reference to anything but its own definitions (which
// are hoisted with it), an identifier (but the top level's own, which is
// left out with it) or an anchor that would resolve elsewhere, a draft-04
// or older dialect whose keywords read otherwise.
func unnestable(v any) string {
	m, _ := v.(map[string]any)
	if d := oldDraft(m); d != "" {
		return "its $schema is " + d
	}
	why := ""
	check := func(k string, val any) bool {
		s, ok := val.(string)
		if !ok {
			return true
		}
		switch k {
		case "$ref":
			if !strings.HasPrefix(s, "#/$defs/") && !strings.HasPrefix(s, "#/definitions/") {
				why = fmt.Sprintf("its $ref %q points outside its definitions", s)
			}
		case "$id", "$anchor", "$dynamicRef", "$dynamicAnchor", "$recursiveRef", "$recursiveAnchor":
			why = "it has " + k
		}
		return why == ""
	}
	if m == nil {
		walkJSON(v, check)
		return why
	}
	for _, k := range sortedKeys(m) {
		if k == "$id" {
			continue // the top level's own: left out where it is nested
		}
		if !check(k, m[k]) || !walkJSON(m[k], check) {
			break
		}
	}
	return why
}

// walkJSON calls f with every member of every object in v, depth first,
// until f returns false.
func walkJSON(v any, f func(k string, val any) bool) bool {
	switch t := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		slices.Sort(keys) // the first problem found is the same each time
		for _, k := range keys {
			if !f(k, t[k]) || !walkJSON(t[k], f) {
				return false
			}
		}
	case []any:
		for _, e := range t {
			if !walkJSON(e, f) {
				return false
			}
		}
	}
	return true
}

// A member is one member of a JSON object, its value as written.
type member struct {
	key string
	raw json.RawMessage
}

func (m member) text() string {
	k, _ := json.Marshal(m.key)
	return string(k) + ":" + string(compact(m.raw))
}

// topMembers are the members of the JSON object doc, in order.
func topMembers(doc []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("not an object")
	}
	var out []member
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := t.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		out = append(out, member{k, raw})
	}
	return out, nil
}

// Descriptions of content, by how it is typed.
const (
	contentStringSchema = `{"type":"string","description":"The answer itself, in the format the description gives, and nothing else."}`
	contentAnySchema    = `{"description":"The answer itself: a JSON value, written as JSON (not a string holding it)."}`
)

// contentSchema is the schema of `content` for shape s.
func (c *Contract) contentSchema(s ToolShape) (content, defs string) {
	switch {
	case !s.Typed || !c.Typed():
		return contentStringSchema, ""
	case s.Strict != "" && c.projected(s.Strict, false) != nil:
		p := c.projected(s.Strict, false)
		return string(p.Content), p.Defs
	case c.shape.content == "":
		return contentAnySchema, "" // no schema, or one that cannot be nested
	}
	return c.shape.content, c.shape.defs
}

// toolSchemaOf builds submit_output's schema: content (its schema given),
// artifacts, unavailable when w offers it, for the strict subset family
// ("" loose).
func toolSchemaOf(content, defs string, unavailable bool, family string) json.RawMessage {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{"content":`)
	if family == StrictOpenAI && unavailable {
		content = `{"anyOf":[` + content + `,{"type":"null"}]}` // required, and null where unavailable is given
	}
	b.WriteString(content)
	b.WriteString(`,"artifacts":`)
	b.WriteString(artifactsSchema(family))
	if unavailable {
		b.WriteString(`,"unavailable":`)
		switch family {
		case StrictOpenAI:
			b.WriteString(`{"type":["string","null"],"description":"` + unavailableDescription + `"}`)
		case StrictAnthropic:
			b.WriteString(`{"type":"string","description":"` + unavailableDescription + `"}`)
		default:
			b.WriteString(`{"type":"string","minLength":1,"description":"` + unavailableDescription + `"}`)
		}
	}
	b.WriteString(`}`)
	switch {
	case family == StrictOpenAI && unavailable:
		b.WriteString(`,"required":["content","artifacts","unavailable"]`)
	case family == StrictOpenAI:
		b.WriteString(`,"required":["content","artifacts"]`)
	case !unavailable:
		b.WriteString(`,"required":["content"]`)
	}
	b.WriteString(`,"additionalProperties":false`)
	if defs != "" {
		b.WriteString("," + defs)
	}
	b.WriteString(`}`)
	return json.RawMessage(b.String())
}

const (
	artifactsDescription   = "Files handed back with the answer: paths relative to the working directory, or objects {name, path, type}."
	nameDescription        = "The artifact's name; a declared artifact is matched by it. Default: the file name without its extension."
	pathDescription        = "The file, relative to the working directory."
	typeDescription        = "The file's MIME type; default: detected from its content and extension."
	unavailableDescription = "Instead of content: why the answer cannot be produced from what you have. Never together with content."
)

// artifactsSchema is the schema of `artifacts` for the strict subset
// family ("" loose).
func artifactsSchema(family string) string {
	switch family {
	case StrictOpenAI:
		return `{"type":["array","null"],"description":"` + artifactsDescription + `","items":{"anyOf":[{"type":"string"},{"type":"object","properties":{` +
			`"name":{"type":["string","null"],"description":"` + nameDescription + `"},` +
			`"path":{"type":"string","description":"` + pathDescription + `"},` +
			`"type":{"type":["string","null"],"description":"` + typeDescription + `"}},` +
			`"required":["name","path","type"],"additionalProperties":false}]}}`
	case StrictAnthropic:
		return `{"type":"array","description":"` + artifactsDescription + `","items":{"anyOf":[{"type":"string"},{"type":"object","properties":{` +
			`"name":{"type":"string","description":"` + nameDescription + `"},` +
			`"path":{"type":"string","description":"` + pathDescription + `"},` +
			`"type":{"type":"string","description":"` + typeDescription + `"}},` +
			`"required":["path"],"additionalProperties":false}]}}`
	}
	return `{"type":"array","description":"` + artifactsDescription + `","items":{"anyOf":[{"type":"string","minLength":1},{"type":"object","properties":{` +
		`"name":{"type":"string","description":"` + nameDescription + `"},` +
		`"path":{"type":"string","minLength":1,"description":"` + pathDescription + `"},` +
		`"type":{"type":"string","description":"` + typeDescription + `"}},` +
		`"required":["path"],"additionalProperties":false}]}}`
}

// ToolSchemaShaped is submit_output's schema for a stage that offers w,
// written as s says.
func (c *Contract) ToolSchemaShaped(w Ways, s ToolShape) json.RawMessage {
	content, defs := c.contentSchema(s)
	return toolSchemaOf(content, defs, w.Unavailable, s.Strict)
}

// ToolStrict says why submit_output, shaped as s, cannot be sent strict
// to a provider of the strict subset family; "" when it can. A string
// content always can (the rest of the schema is coda's, written for the
// subset); a typed one only when the answer's schema fits the subset as it
// is written (strict.go).
func (c *Contract) ToolStrict(family string, s ToolShape) string {
	if !s.Typed || !c.Typed() {
		return ""
	}
	return c.StrictFit(family)
}

// ReplySchema is the schema a constrained reply is asked to satisfy: the
// answer's, as written but for its top level's $schema and $id (metaless:
// it accepts the same values); nil for a json answer without one (any
// JSON), and for one that did not compile. coda's own check runs the
// schema as written.
func (c *Contract) ReplySchema() json.RawMessage {
	if !c.Typed() || c.shape.doc == nil {
		return nil
	}
	return append(json.RawMessage(nil), c.shape.sent...)
}

// ReplySchemaFor is the schema a constrained reply asked strict of the
// strict subset family is sent: the answer's (ReplySchema), or its
// projection where it does not fit as written.
func (c *Contract) ReplySchemaFor(family string) json.RawMessage {
	if p := c.projected(family, true); p != nil {
		return append(json.RawMessage(nil), p.Schema...)
	}
	return c.ReplySchema()
}

// ReplyStrict says why a constrained reply cannot be asked strict of a
// provider of the strict subset family, as written or projected; "" when
// it can.
func (c *Contract) ReplyStrict(family string) string {
	if c.projected(family, true) != nil {
		return ""
	}
	if why := c.fit(family, true); why != "" && c.shape.proj.whyReply[family] == "" {
		return why
	}
	return c.shape.proj.whyReply[family]
}

// StrictFit says why the answer's schema is not sent strict to a provider
// of the strict subset family, as written or projected, as `coda
// validate` words it; "" when it is.
func (c *Contract) StrictFit(family string) string {
	if c.projected(family, false) != nil {
		return ""
	}
	if why := c.fit(family, false); why != "" && c.shape.proj.whyTool[family] == "" {
		return why
	}
	return c.shape.proj.whyTool[family]
}

func (c *Contract) fit(family string, reply bool) string {
	switch {
	case !c.Typed():
		return "the answer is not JSON"
	case c.schemaBroken != "":
		return "the schema does not compile"
	case c.shape.doc == nil:
		return "there is no schema: any JSON value cannot be held to one"
	case c.shape.unnested != "" && !reply:
		return "the schema cannot be nested in submit_output's: " + c.shape.unnested
	}
	return strictFit(c.shape.value, family, reply)
}
