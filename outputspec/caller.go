package outputspec

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/coda-acp/coda/validators"

	"github.com/coda-acp/coda/internal/namedfile"
)

// A caller's own spec (DESIGN §19): a schema or validator that arrives with
// the launch's --output-* flags, session/new or session/prompt
// `_meta.coda.output`, or spawn_agent's output_* is checked where it
// arrives, and one that does not compile is refused there, naming the
// problem: the caller is present to fix it. A blueprint's own schema keeps
// failing open (Compile: schema_unchecked, with a warning), as the answer
// contract's authors expect of a file that ships with an agent.

// A CallerError says which of a caller's checks does not compile, and why.
type CallerError struct {
	// Field is the spec's field, as `_meta.coda.output` spells it:
	// "schema", "schemaFile" or "validator".
	Field string
	Err   error
}

func (e *CallerError) Error() string { return e.Err.Error() }
func (e *CallerError) Unwrap() error { return e.Err }

// CheckCaller reports why the schema or validator of a caller's level does
// not compile (a *CallerError: "the schema does not compile: ...", "schema
// file s.json: ...", "validator v.star:3:1: ..."), or nil. It is checked
// whatever format the level asks for, and whether or not a later level
// retires it: a broken check is the caller's to fix either way.
func CheckCaller(l Level) error {
	s := l.Spec
	switch {
	case s.SchemaFile != "":
		name := join(l.Dir, s.SchemaFile)
		b, err := namedfile.Read(name, MaxFileBytes)
		switch {
		case err != nil:
			err = fmt.Errorf("schema file %s", fileError(name, err))
		default:
			if _, perr := parseSchema(b); perr != nil {
				err = fmt.Errorf("schema file %s:%s", name, perr)
			} else if _, cerr := validators.CompileSchemaWith(b, s.SchemaOptions()); cerr != nil {
				err = fmt.Errorf("schema file %s: %s", name, oneLine(cerr.Error()))
			}
		}
		if err != nil {
			return &CallerError{Field: "schemaFile", Err: err}
		}
	case s.Schema != nil:
		b, err := json.Marshal(s.Schema)
		if err == nil {
			_, err = validators.CompileSchemaWith(b, s.SchemaOptions())
		}
		if err != nil {
			return &CallerError{Field: "schema", Err: errors.New(oneLine(err.Error()))}
		}
	}
	if s.Validator != "" {
		if _, err := Compile(Spec{Format: s.Format, Validator: join(l.Dir, s.Validator)}); err != nil {
			return &CallerError{Field: "validator", Err: err}
		}
	}
	return nil
}
