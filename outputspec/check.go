package outputspec

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/coda-acp/coda/internal/answer"
	"github.com/coda-acp/coda/validators"
)

// MaxAnswer caps an answer's size; a longer one is cut and marked truncated.
const MaxAnswer = answer.MaxBytes

// maxViolations caps the schema violations listed to the model.
const maxViolations = 20

// A Submission is one submit_output call, or a reply checked as one.
type Submission struct {
	Args json.RawMessage // the tool call's arguments
	// Reply, when not empty, is a reply's text submitted as the answer
	// (DESIGN §15) in place of Args: a content with nothing to parse, so
	// a long reply is not encoded as arguments only to be decoded again.
	Reply string
	// Typed says the call was offered a typed submit_output (ToolShape):
	// for a json answer, `content` is the answer's JSON value, and a
	// string content the JSON text it holds (models that stringify),
	// unless the schema names a string at its top.
	Typed bool
	// Projected names the strict family whose projection of the answer's
	// schema the call was shaped with (ToolShape.Strict, or a reply format
	// asked strict): the content is read back (projected.go) before it is
	// checked.
	Projected string
	Root      string   // artifacts must resolve inside it
	Stages    []string // the blueprint's stage names
	// Overwritten lists files the run changed that existed before it
	// (absolute paths). With overwrite_artifacts = false, none of them may
	// be handed back as an artifact.
	Overwritten []string
}

// A Verdict is the outcome of checking a Submission.
type Verdict struct {
	Accepted bool
	// Feedback is what the model is told: the reasons for a refusal, or a
	// note on an accepted answer (such as its truncation).
	Feedback string
	// Content is the answer as checked (cut when Truncated).
	Content   string
	Truncated bool
	// Flags, Warnings and Artifacts go into the answer record; on an
	// accepted verdict they are non-nil, possibly empty. Warnings are this
	// check's (a broken validator accepted), not the contract's own.
	Flags     []string
	Warnings  []string
	Artifacts []Artifact
	// Data is an accepted json, yaml or toml answer's decoded value, as
	// JSON (the answer record's data, DESIGN §19); nil for other formats,
	// and for a value JSON cannot hold.
	Data json.RawMessage
	// Unavailable is the reason of a submission that declares the answer
	// unavailable (submit_output's `unavailable`): neither accepted nor
	// refused, it is the caller's to honour or refuse (DESIGN §15).
	Unavailable string
}

// An Artifact is a file handed back with the answer.
type Artifact = answer.Artifact

// args are submit_output's arguments, parsed.
type args struct {
	content   string
	artifacts []artifactRef
	// unavailable is set when the submission declares the answer
	// unavailable instead of giving it; content is then empty.
	unavailable string
}

// An artifactRef is one entry of `artifacts`: a path, or {name, path, type}.
type artifactRef struct {
	Name, Path, Type string
}

// validUTF8 is s as its JSON encoding decodes: each byte that is not part
// of a UTF-8 character becomes U+FFFD, so that a reply is checked as the
// same text in submit_output's "content" would be.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for _, r := range s {
		b.WriteRune(r) // an invalid byte ranges as utf8.RuneError, one byte wide
	}
	return b.String()
}

// admit reads a submission's arguments. settled reports that they decide
// the verdict before any check of the answer: a refusal of their shape, or
// the answer declared unavailable.
func (c *Contract) admit(sub Submission) (a args, v Verdict, settled bool) {
	if sub.Reply != "" {
		return args{content: c.back(validUTF8(sub.Reply), sub.Projected, true)}, Verdict{}, false
	}
	a, problem := parseArgsAs(sub.Args, c.contentRule(sub))
	switch {
	case problem != "":
		return a, refuse(problem), true
	case a.unavailable != "":
		return a, Verdict{Unavailable: a.unavailable}, true
	}
	if sub.Typed {
		a.content = c.back(a.content, sub.Projected, false)
	}
	return a, Verdict{}, false
}

// check runs steps 0 (after the arguments' shape) to 5. memo reports that
// a refusal depends on the content alone, so an identical resubmission
// would be refused the same way.
func (c *Contract) check(ctx context.Context, sub Submission, a args) (v Verdict, memo bool) {
	content := a.content
	if strings.TrimSpace(content) == "" {
		return refuse("The answer is empty: submit the answer itself in \"content\"."), true
	}
	if name := stageName(content, sub.Stages); name != "" {
		return refuse(fmt.Sprintf("%q is the name of a stage, not an answer: submit_output takes the answer itself in \"content\".", name)), true
	}

	// The contract's own warnings (Contract.Warnings) reach the run once,
	// when it is compiled; a verdict carries only what this check found.
	v = Verdict{Content: content, Flags: []string{}, Warnings: []string{}, Artifacts: []Artifact{}}
	var notes []string // told to the model whatever the outcome
	if len(content) > MaxAnswer {
		v.Content = cut(content, MaxAnswer)
		v.Truncated = true
		v.Flags = append(v.Flags, FlagTruncated)
		notes = append(notes, fmt.Sprintf("The answer is %d bytes, over the %d-byte (256 KiB) cap: it was cut to its first %d bytes, and the cut answer was checked. Submit a shorter answer.",
			len(content), MaxAnswer, len(v.Content)))
	}
	no := func(reason string) (Verdict, bool) {
		v.Accepted = false
		v.Feedback = strings.Join(append(notes, reason), "\n")
		return v, true
	}

	// Well-formedness, then the schema. With a schema (only ever for a format
	// Decode handles) one Decode does both: it applies Check's rules and
	// fails with the same error, so the answer is parsed once, not twice.
	// validators' messages say what to do about a malformed answer.
	var data any // the decoded answer, when the schema needed it
	if c.schema == nil {
		if err := validators.Check(c.format, v.Content); err != nil {
			return no(c.notWellFormed(err))
		}
		if c.schemaBroken != "" {
			v.Flags = append(v.Flags, FlagSchemaUnchecked)
		}
	} else {
		var err error
		data, err = validators.Decode(c.format, v.Content)
		if err != nil {
			return no(c.notWellFormed(err))
		}
		if vs := c.schema.Validate(data); len(vs) > 0 {
			return no(fmt.Sprintf("The answer does not satisfy the JSON Schema (%s):\n%s",
				plural(len(vs), "violation"), validators.FormatViolations(vs, maxViolations)))
		}
	}

	if c.validator != nil {
		reason, err := c.validator.Validate(ctx, v.Content)
		switch {
		case err != nil && ctx.Err() != nil:
			v, _ = no("The check was interrupted: " + ctx.Err().Error() + ".")
			return v, false
		case err != nil && c.acceptBrokenValidator:
			v.Flags = append(v.Flags, FlagValidatorError)
			v.Warnings = append(v.Warnings, fmt.Sprintf("validator %s failed (%s): the answer is recorded without its check",
				c.validatorName(), c.scriptError(err)))
		case err != nil:
			// A broken validator may depend on more than the content (a
			// wall-clock guard), so this refusal is not remembered.
			v, _ = no(fmt.Sprintf("The answer's validator (%s) failed on this answer: %s. Check the answer against the instructions and submit again.",
				c.validatorName(), c.scriptError(err)))
			return v, false
		case strings.TrimSpace(reason) != "":
			return no(sentence("The answer was refused by its validator: " + strings.TrimSpace(reason)))
		}
	}

	// Artifacts depend on the files at submit time, not on the content: a
	// refusal here is not remembered.
	arts, problems := c.checkArtifacts(sub.Root, a.artifacts, sub.Overwritten)
	if len(problems) > 0 {
		v, _ = no("The submission was refused for its artifacts:\n- " + strings.Join(problems, "\n- "))
		return v, false
	}
	v.Artifacts = arts
	v.Data = c.data(v.Content, data)
	v.Accepted = true
	if len(notes) > 0 {
		v.Feedback = strings.Join(append(notes, "The cut answer was accepted; a shorter accepted answer would replace it."), "\n")
	}
	return v, false
}

func refuse(reason string) Verdict { return Verdict{Feedback: reason} }

// data is an accepted answer's value as JSON: a json answer's own bytes
// (checked already: nothing is decoded), a yaml or toml answer decoded
// (once: decoded is its value when the schema's check decoded it) and
// encoded; nil for other formats, and for a value JSON cannot hold.
func (c *Contract) data(content string, decoded any) json.RawMessage {
	if c.format == "json" {
		return json.RawMessage(content)
	}
	if f, _ := validators.Lookup(c.format); !f.HasDecoder() {
		return nil
	}
	if decoded == nil {
		var err error
		if decoded, err = validators.Decode(c.format, content); err != nil {
			return nil
		}
	}
	b, err := json.Marshal(decoded)
	if err != nil {
		return nil
	}
	return b
}

// sentence ends s with a full stop unless it has its own.
func sentence(s string) string {
	if strings.HasSuffix(s, ".") || strings.HasSuffix(s, "!") || strings.HasSuffix(s, "?") {
		return s
	}
	return s + "."
}

// stageName returns the stage name that content consists of, if any.
func stageName(content string, stages []string) string {
	s := strings.Trim(strings.TrimSpace(content), "\"'`")
	for _, name := range stages {
		if name != "" && strings.EqualFold(s, name) {
			return name
		}
	}
	return ""
}

// cut returns s's longest prefix of at most n bytes that ends on a UTF-8
// character boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	// s[i] starts a character; s[:i] ends on a boundary. A malformed
	// sequence of continuation bytes longer than 3 is cut where it is.
	if n-i > utf8.UTFMax {
		i = n
	}
	return s[:i]
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// notWellFormed words a well-formedness failure for the model: the format,
// where (when the parser knows), and what to do.
func (c *Contract) notWellFormed(err error) string {
	var ve *validators.Error
	if !errors.As(err, &ve) {
		return sentence(fmt.Sprintf("The answer is not well-formed %s: %s", c.formatName(), oneLine(err.Error())))
	}
	where := ""
	switch {
	case ve.Line > 0 && ve.Column > 0:
		where = fmt.Sprintf(" (line %d, column %d)", ve.Line, ve.Column)
	case ve.Line > 0:
		where = fmt.Sprintf(" (line %d)", ve.Line)
	}
	if ve.Limit { // valid, perhaps, but beyond what coda reads: not the model's mistake
		return sentence(fmt.Sprintf("The answer cannot be read%s: %s", where, oneLine(ve.Msg)))
	}
	return sentence(fmt.Sprintf("The answer is not well-formed %s%s: %s", c.formatName(), where, oneLine(ve.Msg)))
}

// formatName names the format in feedback: "JSON", or the label itself.
func (c *Contract) formatName() string {
	if f, ok := validators.Lookup(c.format); ok {
		return f.Name
	}
	return c.format
}

// scriptError is a validator's error on one line, naming the script by its
// file name rather than the path it has on this machine.
func (c *Contract) scriptError(err error) string {
	return strings.ReplaceAll(oneLine(err.Error()), c.spec.Validator, c.validatorName())
}

func (c *Contract) validatorName() string {
	i := strings.LastIndexAny(c.spec.Validator, `/\`)
	return c.spec.Validator[i+1:]
}

// A contentRule is how `content` is read.
type contentRule struct {
	// value: content is the answer's JSON value, its bytes as written
	// (typed submit_output, a json answer); a string is the JSON text it
	// holds, unless stringIsValue (the schema names a string at its top).
	value, stringIsValue bool
}

// contentRule is how sub's content is read under c.
func (c *Contract) contentRule(sub Submission) contentRule {
	if !sub.Typed || !c.Typed() {
		return contentRule{}
	}
	return contentRule{value: true, stringIsValue: c.shape.stringTop}
}

// parseArgsAs checks the arguments against the tool's schema (ToolSchemaFor,
// or ToolSchemaShaped where rule.value), returning a message for the model
// when they do not fit it; a typed content's own schema is the answer's,
// checked in its turn (check). `content` and `unavailable` exclude each
// other, which the schema cannot say (providers refuse combinators at a
// tool schema's top level), so only this check says it.
func parseArgsAs(raw json.RawMessage, rule contentRule) (args, string) {
	shape := `submit_output takes {"content": "<the answer>", "artifacts": [optional paths or {"name", "path", "type"}]}`
	if rule.value {
		shape = `submit_output takes {"content": <the answer, as JSON>, "artifacts": [optional paths or {"name", "path", "type"}]}`
	}
	var a args
	text := strings.TrimSpace(string(raw))
	if text == "" || text == "null" {
		text = "{}"
	}
	fields, ok := members(text)
	if !ok {
		return a, "The arguments are not a JSON object: " + shape + "."
	}
	var extra []string
	for k := range fields {
		if k != "content" && k != "artifacts" && k != "unavailable" {
			extra = append(extra, fmt.Sprintf("%q", k))
		}
	}
	if len(extra) > 0 {
		slices.Sort(extra)
		return a, fmt.Sprintf("Unknown argument %s: %s.", strings.Join(extra, ", "), shape)
	}
	if ru, ok := fields["unavailable"]; ok && ru != "null" {
		return parseUnavailable(fields, ru)
	}
	rc, ok := fields["content"]
	switch {
	case !ok || rc == "null":
		if rule.value {
			return a, `"content" is missing: ` + shape + "."
		}
		return a, `The "content" string is missing: ` + shape + "."
	case rule.value && (rc[0] != '"' || rule.stringIsValue):
		a.content = string(compact([]byte(rc))) // the answer's own bytes, compacted
	case json.Unmarshal([]byte(rc), &a.content) != nil:
		return a, `"content" must be a string holding the answer's text (for a JSON answer, the JSON document written out as a string), not ` + jsonKindOf(rc) + "."
	}
	if ra, ok := fields["artifacts"]; ok && ra != "null" {
		var items []json.RawMessage
		if err := json.Unmarshal([]byte(ra), &items); err != nil {
			return a, `"artifacts" must be an array of paths or {"name", "path", "type"} objects, not ` + jsonKindOf(ra) + "."
		}
		for i, it := range items {
			ref, problem := parseRef(it)
			if problem != "" {
				return a, fmt.Sprintf("artifacts[%d] %s: each artifact is a path or {\"name\", \"path\", \"type\"} with a path.", i, problem)
			}
			a.artifacts = append(a.artifacts, ref)
		}
	}
	return a, ""
}

// members splits the arguments, a JSON object, into the texts of its
// members' values, as json.Unmarshal into a map of json.RawMessage does.
func members(text string) (map[string]string, bool) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal([]byte(text), &fields); err != nil {
		return nil, false
	}
	m := make(map[string]string, len(fields))
	for k, v := range fields {
		m[k] = string(v)
	}
	return m, true
}

// parseUnavailable reads a submission that declares the answer
// unavailable: a reason, and no answer beside it.
func parseUnavailable(fields map[string]string, ru string) (args, string) {
	var a args
	var reason string
	if err := json.Unmarshal([]byte(ru), &reason); err != nil {
		return a, `"unavailable" must be a string saying why the answer cannot be given, not ` + jsonKindOf(ru) + "."
	}
	if strings.TrimSpace(reason) == "" {
		return a, `"unavailable" is empty: say why the answer cannot be given, or submit the answer in "content".`
	}
	if rc, ok := fields["content"]; ok && rc != "null" {
		var content string
		if json.Unmarshal([]byte(rc), &content) != nil || strings.TrimSpace(content) != "" {
			return a, `Give either "content" (the answer) or "unavailable" (why there is none), not both.`
		}
	}
	if ra, ok := fields["artifacts"]; ok && ra != "null" && ra != "[]" {
		return a, `"artifacts" go with an answer: a submission that declares it "unavailable" hands back no files.`
	}
	a.unavailable = strings.TrimSpace(reason)
	return a, ""
}

func parseRef(raw json.RawMessage) (artifactRef, string) {
	var ref artifactRef
	if len(raw) > 0 && raw[0] == '"' {
		if err := json.Unmarshal(raw, &ref.Path); err != nil {
			return ref, "is not a valid string"
		}
		if ref.Path == "" {
			return ref, "is an empty path"
		}
		return ref, ""
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return ref, "is " + jsonKindOf(string(raw))
	}
	for k, v := range fields {
		var dst *string
		switch k {
		case "name":
			dst = &ref.Name
		case "path":
			dst = &ref.Path
		case "type":
			dst = &ref.Type
		default:
			return ref, fmt.Sprintf("has an unknown field %q", k)
		}
		if err := json.Unmarshal(v, dst); err != nil {
			return ref, fmt.Sprintf("field %q must be a string, not %s", k, jsonKindOf(string(v)))
		}
	}
	if ref.Path == "" {
		return ref, "has no path"
	}
	return ref, ""
}

// jsonKindOf names the kind of a JSON value for a message.
func jsonKindOf(raw string) string {
	raw = strings.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}
