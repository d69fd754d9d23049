package validators

import (
	"fmt"
	"strings"
)

// Error is a well-formedness failure, positioned where the parser knows.
type Error struct {
	Line, Column int // 1-based; 0 when unknown
	Msg          string
}

func (e *Error) Error() string {
	switch {
	case e.Line > 0 && e.Column > 0:
		return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Msg)
	case e.Line > 0:
		return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	}
	return e.Msg
}

var aliases = map[string]string{
	"md":               "markdown",
	"text/markdown":    "markdown",
	"yml":              "yaml",
	"application/yaml": "yaml",
	"text/yaml":        "yaml",
	"application/json": "json",
	"text/csv":         "csv",
	"application/xml":  "xml",
	"text/xml":         "xml",
	"application/toml": "toml",
	"text/plain":       "text",
	"txt":              "text",
}

// Canonical returns the label's canonical spelling: trimmed, lower-cased,
// aliases resolved ("md" → "markdown", "application/json" → "json").
// Labels coda does not know are returned trimmed and lower-cased.
func Canonical(label string) string {
	l := strings.ToLower(strings.TrimSpace(label))
	if a, ok := aliases[l]; ok {
		return a
	}
	return l
}

// checkers maps canonical labels to their well-formedness checks.
var checkers = map[string]func(string) error{
	"json":     checkJSON,
	"xml":      checkXML,
	"csv":      checkCSV,
	"yaml":     checkYAML,
	"toml":     checkTOML,
	"markdown": checkMarkdown,
}

// decoders maps canonical labels to the decoders of the formats whose data
// a JSON Schema can describe.
var decoders = map[string]func(string) (any, error){
	"json": decodeJSON, // a failure is diagnosed with frame's rules already
	"yaml": framed(kindYAML, decodeYAML),
	"toml": framed(kindTOML, decodeTOML),
}

// framed applies frame's rules (fences, preamble, another format) before
// decoding, as Check does.
func framed(k kind, decode func(string) (any, error)) func(string) (any, error) {
	return func(content string) (any, error) {
		if e := frame(content, k); e != nil {
			return nil, e
		}
		return decode(content)
	}
}

// HasParser reports whether format (any spelling) has a built-in check.
func HasParser(format string) bool {
	_, ok := checkers[Canonical(format)]
	return ok
}

// Check reports why content is not well-formed for format, or nil. A format
// with no built-in parser is carried through unchecked (nil). The error is
// an *Error, worded for the model that wrote content.
func Check(format, content string) error {
	if c, ok := checkers[Canonical(format)]; ok {
		return c(content)
	}
	return nil
}

// HasDecoder reports whether Decode handles format (any spelling): json,
// yaml and toml, the formats a JSON Schema applies to.
func HasDecoder(format string) bool {
	_, ok := decoders[Canonical(format)]
	return ok
}

// Decode returns the answer's data as JSON-like Go values, ready for a JSON
// Schema: map[string]any, []any, string, float64, int64, bool and nil. YAML
// keys become strings; TOML and YAML dates and times become strings. It
// applies the rules of Check first, so an answer Check refuses is refused
// here with the same *Error.
func Decode(format, content string) (any, error) {
	d, ok := decoders[Canonical(format)]
	if !ok {
		return nil, fmt.Errorf("validators: no decoder for format %q", format)
	}
	return d(content)
}
