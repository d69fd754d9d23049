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
	empty, e := tomlTables(content)
	if e != nil {
		return nil, e
	}
	if len(empty) > 0 {
		if v2, ok := decodeEmptyKeys(content, empty); ok {
			v = v2
		}
	}
	if len(v) == 0 {
		return nil, &Error{Msg: "the answer has no TOML keys or tables: submit the TOML document"}
	}
	return jsonLike(map[string]any(v)), nil
}

// tomlEmptyKey stands for the empty key while BurntSushi/toml v1.6.0
// decodes a document: it loses an array level, and the values beside it,
// where an inline table in an array has the key "" (toml-test
// valid/key/empty-04: [[{"" = 2}]] decodes as [{"" = 2}]).
const tomlEmptyKey = "\uE000coda-empty-key\uE000"

// decodeEmptyKeys decodes content with each quoted empty key (at empty)
// written as tomlEmptyKey, then names it "" again. ok is false when the
// document may hold tomlEmptyKey itself.
func decodeEmptyKeys(content string, empty [][2]int) (map[string]any, bool) {
	if strings.Contains(content, "coda-empty-key") {
		return nil, false
	}
	var b strings.Builder
	last := 0
	for _, at := range empty {
		b.WriteString(content[last:at[0]])
		b.WriteString(`"\uE000coda-empty-key\uE000"`)
		last = at[1]
	}
	b.WriteString(content[last:])
	var v map[string]any
	if _, err := toml.Decode(b.String(), &v); err != nil {
		return nil, false
	}
	return renameEmptyKey(v).(map[string]any), true
}

func renameEmptyKey(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			x = renameEmptyKey(x)
			if k == tomlEmptyKey {
				delete(v, k)
				k = ""
			}
			v[k] = x
		}
	case []map[string]any:
		for i := range v {
			renameEmptyKey(v[i])
		}
	case []any:
		for i, x := range v {
			v[i] = renameEmptyKey(x)
		}
	}
	return v
}
