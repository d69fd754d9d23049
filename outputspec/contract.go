package outputspec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/coda-acp/coda/validators"

	"github.com/coda-acp/coda/internal/namedfile"
)

// Flags a verdict may carry into the answer record.
const (
	FlagTruncated       = "truncated"
	FlagSchemaUnchecked = "schema_unchecked"
	FlagValidatorError  = "validator_error"
)

// A Contract is a resolved Spec with its schema and validator compiled,
// ready to check submissions. It is immutable and safe for concurrent use.
type Contract struct {
	spec   Spec
	format string // canonical

	// schemaText is the schema as the model sees it (a file as its author
	// laid it out, an inline schema indented), set when a schema applies
	// to the format; schema is nil when it did not compile, and
	// schemaBroken then says why (the answer is recorded unchecked).
	schemaText   string
	schemaName   string // "schema findings.json" or "inline schema", for messages
	schema       *validators.Schema
	schemaBroken string

	// shape is what the answer's schema makes of submit_output's content
	// and of a constrained reply (shape.go): made once, at Compile.
	shape shape

	validator             *validators.Validator
	acceptBrokenValidator bool

	warnings []string // compile-time warnings
}

// Compile readies spec (normally the result of Resolve) for checking.
//
// An error is a start-up error, one line naming the file, the line and the
// problem: a schema file that is missing, a schema that is not parseable
// JSON, a validator that is missing or does not compile, an invalid spec.
// A schema that parses but does not compile as a JSON Schema (or has an
// unresolvable $ref) is not an error: it fails open, answers are recorded
// unchecked with the flag schema_unchecked, and Warnings says why.
//
// A schema applies only to json, yaml and toml answers; for any other
// format it is still read and parsed (a bad one is still an error), but it
// is not shown to the model nor checked, and Warnings says it was ignored.
// A validator applies to every format: retirement (Resolve) keeps one
// written for another format out of the spec.
func Compile(spec Spec) (*Contract, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if strings.TrimSpace(spec.Format) == "" {
		spec.Format = DefaultFormat
	}
	c := &Contract{
		spec:                  spec,
		format:                validators.Canonical(spec.Format),
		acceptBrokenValidator: spec.OnValidatorError == OnValidatorErrorAccept,
	}
	if err := c.readSchema(); err != nil {
		return nil, err
	}
	if spec.Validator != "" {
		v, err := validators.LoadValidator(spec.Validator)
		if err != nil {
			msg := oneLine(err.Error())
			switch {
			case strings.HasPrefix(msg, spec.Validator):
				return nil, fmt.Errorf("validator %s", msg)
			case strings.Contains(msg, filepath.Base(spec.Validator)):
				return nil, errors.New(msg)
			}
			return nil, fmt.Errorf("validator %s: %s", spec.Validator, msg)
		}
		c.validator = v
	}
	return c, nil
}

func (c *Contract) readSchema() error {
	var doc []byte
	switch {
	case c.spec.SchemaFile != "":
		name := c.spec.SchemaFile
		b, err := namedfile.Read(name, MaxFileBytes)
		if err != nil {
			return fmt.Errorf("schema file %s", fileError(name, err))
		}
		if _, err := parseSchema(b); err != nil {
			return fmt.Errorf("schema file %s:%s", name, err)
		}
		doc, c.schemaName = b, "schema "+filepath.Base(name)
		c.schemaText = strings.TrimSpace(string(b))
	case c.spec.Schema != nil:
		// Validate made it a map[string]any, so it marshals to an object.
		b, err := json.Marshal(c.spec.Schema)
		if err != nil {
			return fmt.Errorf("inline schema: %s", oneLine(err.Error()))
		}
		doc, c.schemaName = b, "inline schema"
		var ind bytes.Buffer
		if err := json.Indent(&ind, b, "", "  "); err == nil {
			c.schemaText = ind.String()
		}
	default:
		return nil
	}
	if f, _ := validators.Lookup(c.format); !f.HasDecoder() {
		c.schemaText = ""
		c.warnings = append(c.warnings, fmt.Sprintf("%s ignored: a JSON Schema checks json, yaml and toml answers, and the format is %s", c.schemaName, c.format))
		return nil
	}
	s, err := validators.CompileSchemaWith(doc, c.spec.SchemaOptions())
	if err != nil {
		c.schemaBroken = fmt.Sprintf("%s unchecked: %s", c.schemaName, oneLine(err.Error()))
		c.warnings = append(c.warnings, c.schemaBroken)
		return nil
	}
	c.schema = s
	if c.format == "json" {
		c.shape = shapeOf(doc)
	}
	return nil
}

func compact(b []byte) json.RawMessage {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return json.RawMessage(b)
	}
	return buf.Bytes()
}

// Spec returns the resolved spec the contract enforces.
func (c *Contract) Spec() Spec { return c.spec }

// Format is the canonical format label.
func (c *Contract) Format() string { return c.format }

// Warnings are what compiling found worth saying without refusing to start:
// a schema that did not compile (fail-open), a schema for a format it
// cannot check. The caller hands them on once (blueprint.CompileOutputs puts
// them in the run's warnings); verdicts do not repeat them.
func (c *Contract) Warnings() []string { return append([]string(nil), c.warnings...) }

// SchemaUnchecked is the warning for a schema that is in effect but did
// not compile, so answers go unchecked against it; "" when there is none.
// It is also one of Warnings.
func (c *Contract) SchemaUnchecked() string { return c.schemaBroken }

// oneLine folds a multi-line message onto one line.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	parts := strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' })
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return strings.Join(parts, "; ")
}
