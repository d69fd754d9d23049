package outputspec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/coda-acp/coda/internal/namedfile"
)

// ParseMeta reads a spec from `_meta.coda.output` of session/new or
// session/prompt: a JSON object with the camelCase fields of Spec. An
// unknown field is an error naming it; so is a schema that is not an
// object. Relative paths are kept relative: the caller's Level.Dir (the
// session's cwd) resolves them. A null or absent value is the empty Spec.
// Errors are one line, fit for a -32602 message.
func ParseMeta(raw json.RawMessage) (Spec, error) {
	var s Spec
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return s, nil
	}
	if raw[0] != '{' {
		return s, errors.New("_meta.coda.output must be an object")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	dec.UseNumber() // an inline schema's numbers survive re-encoding exactly
	if err := dec.Decode(&s); err != nil {
		return Spec{}, fmt.Errorf("_meta.coda.output: %s", metaError(err))
	}
	if err := s.Validate(); err != nil {
		return Spec{}, fmt.Errorf("_meta.coda.output: %s", strings.TrimPrefix(err.Error(), "output spec: "))
	}
	return s, nil
}

// metaError words a decoding error of _meta.coda.output by field.
func metaError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return fmt.Sprintf("field %q must be %s", te.Field, jsonKind(te.Type.Kind().String()))
	}
	msg := err.Error()
	if f, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return "unknown field " + f
	}
	return strings.TrimPrefix(msg, "json: ")
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "slice":
		return "an array"
	case "struct", "map":
		return "an object"
	}
	return goKind
}

// MaxFileBytes is the most coda reads of a schema, example or validator
// file; only regular files are read (internal/namedfile).
const MaxFileBytes = 4 << 20

// Launch builds the launch level's spec from the --output-* flags. example
// is TEXT or @FILE; schema is JSON or @FILE. Files are read now, so a bad
// flag stops coda before it serves: an unreadable file or unparseable
// schema JSON is an error naming the flag, the file and the line. A schema
// given as @FILE is kept as SchemaFile (absolute) so later messages name
// the file; the validator path is made absolute. Empty flags are unset, and
// so is a nil assertFormat (--output-assert-format not given).
func Launch(format, instructions, example, schema, validator string, assertFormat *bool) (Spec, error) {
	s := Spec{Format: strings.TrimSpace(format), Instructions: instructions, AssertFormat: assertFormat}
	if name, ok := strings.CutPrefix(example, "@"); ok {
		b, err := namedfile.Read(name, MaxFileBytes)
		if err != nil {
			return Spec{}, fmt.Errorf("--output-example: %s", fileError(name, err))
		}
		s.Example = string(b)
	} else {
		s.Example = example
	}
	if name, ok := strings.CutPrefix(schema, "@"); ok {
		b, err := namedfile.Read(name, MaxFileBytes)
		if err != nil {
			return Spec{}, fmt.Errorf("--output-schema: %s", fileError(name, err))
		}
		if _, err := parseSchema(b); err != nil {
			return Spec{}, fmt.Errorf("--output-schema: %s:%s", name, err)
		}
		if s.SchemaFile, err = filepath.Abs(name); err != nil {
			return Spec{}, fmt.Errorf("--output-schema: %s: %v", name, err)
		}
	} else if strings.TrimSpace(schema) != "" {
		v, err := parseSchema([]byte(schema))
		if err != nil {
			return Spec{}, fmt.Errorf("--output-schema: %s", err)
		}
		s.Schema = v
	}
	if validator != "" {
		p, err := filepath.Abs(validator)
		if err != nil {
			return Spec{}, fmt.Errorf("--output-validator: %s: %v", validator, err)
		}
		s.Validator = p
	}
	if err := s.Validate(); err != nil {
		return Spec{}, err
	}
	return s, nil
}

// fileError words a failure to read a file in one line.
func fileError(name string, err error) string {
	switch {
	case errors.Is(err, os.ErrNotExist):
		return name + ": no such file"
	case errors.Is(err, os.ErrPermission):
		return name + ": permission denied"
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Sprintf("%s: %v", name, pe.Err)
	}
	return fmt.Sprintf("%s: %v", name, err)
}

// parseSchema decodes a JSON Schema document. It must be one JSON object.
// An error reads "LINE:COLUMN: problem", to follow a file name and colon.
func parseSchema(b []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, positioned(b, err)
	}
	if off := dec.InputOffset(); len(bytes.TrimSpace(b[off:])) > 0 {
		line, col := lineCol(b, off+int64(len(b[off:])-len(bytes.TrimLeft(b[off:], " \t\r\n"))))
		return nil, fmt.Errorf("%d:%d: text after the schema's JSON value", line, col)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("1:1: a JSON Schema must be an object, not %s", kindOf(v))
	}
	return m, nil
}

// positioned turns a JSON decoding error into "LINE:COLUMN: problem".
func positioned(b []byte, err error) error {
	var off int64 = -1
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = max(se.Offset-1, 0) // Offset is just past the offending byte
	case errors.As(err, &te):
		off = te.Offset
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		off = int64(len(b))
		if len(bytes.TrimSpace(b)) == 0 {
			return errors.New("1:1: empty, where a JSON Schema object was expected")
		}
		err = errors.New("unexpected end of JSON input")
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	if off < 0 {
		return errors.New("1:1: " + msg)
	}
	line, col := lineCol(b, off)
	return fmt.Errorf("%d:%d: %s", line, col, msg)
}

// lineCol converts a byte offset to a 1-based line and column (in bytes).
func lineCol(b []byte, off int64) (line, col int) {
	if off > int64(len(b)) {
		off = int64(len(b))
	}
	before := b[:off]
	line = bytes.Count(before, []byte{'\n'}) + 1
	col = int(off) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}
