package validators

import (
	"errors"
	"regexp"
	"strings"

	"github.com/BurntSushi/toml"
)

// checkTOML accepts a TOML document.
func checkTOML(content string) error {
	if e := frame(content, kindTOML); e != nil {
		return e
	}
	if _, err := decodeTOML(content); err != nil {
		return err
	}
	return nil
}

// yamlKey matches a line written as YAML ("key: value") rather than TOML
// ("key = value").
var yamlKey = regexp.MustCompile(`^\s*[A-Za-z0-9_"'-]+\s*:(\s|$)`)

// tomlError positions a BurntSushi/toml error.
func tomlError(err error) *Error {
	var pe toml.ParseError
	if !errors.As(err, &pe) {
		return &Error{Msg: err.Error()}
	}
	if pe.Position.Line <= 0 {
		return &Error{Msg: pe.Message}
	}
	return &Error{Line: pe.Position.Line, Column: pe.Position.Col, Msg: pe.Message}
}

// decodeTOML decodes a TOML document into JSON-like Go values.
func decodeTOML(content string) (any, error) {
	var v map[string]any
	if _, err := toml.Decode(content, &v); err != nil {
		e := tomlError(err)
		if line := lineAt(content, e.Line); e.Line > 0 && yamlKey.MatchString(line) && !strings.Contains(line, "=") {
			e.Msg = "this line is written as YAML (key: value), but the answer must be TOML (key = value)"
			e.Column = 0
		}
		return nil, e
	}
	if len(v) == 0 {
		return nil, &Error{Msg: "the answer has no TOML keys or tables: submit the TOML document"}
	}
	return jsonLike(map[string]any(v)), nil
}
