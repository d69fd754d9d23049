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
	"json": checkJSON,
}

// HasParser reports whether format (any spelling) has a built-in check.
func HasParser(format string) bool {
	_, ok := checkers[Canonical(format)]
	return ok
}

// Check reports why content is not well-formed for format, or nil. A format
// with no built-in parser is carried through unchecked (nil).
func Check(format, content string) error {
	if c, ok := checkers[Canonical(format)]; ok {
		return c(content)
	}
	return nil
}
