package outputspec

import (
	"context"

	"github.com/coda-acp/coda/validators"
)

// The JSON Schema and Starlark parts of package validators, behind the few
// calls outputspec makes of them.

// A compiledSchema checks decoded data; violations come back counted and
// formatted for the model (capped at max lines plus the total).
type compiledSchema interface {
	check(data any, max int) (n int, text string)
}

// A scriptValidator runs a validator's validate(content); err != nil means
// the validator is broken, not that it rejected the content.
type scriptValidator interface {
	Validate(ctx context.Context, content string) (reason string, err error)
}

type schema struct{ s *validators.Schema }

func (s schema) check(data any, max int) (int, string) {
	vs := s.s.Validate(data)
	if len(vs) == 0 {
		return 0, ""
	}
	return len(vs), validators.FormatViolations(vs, max)
}

func compileSchema(src []byte) (compiledSchema, error) {
	s, err := validators.CompileSchema(src)
	if err != nil {
		return nil, err
	}
	return schema{s}, nil
}

func loadValidator(path string) (scriptValidator, error) {
	v, err := validators.LoadValidator(path)
	if err != nil {
		return nil, err
	}
	return v, nil
}

func decode(format, content string) (any, error) { return validators.Decode(format, content) }
