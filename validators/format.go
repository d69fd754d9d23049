package validators

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Error is a well-formedness failure, positioned where the parser knows.
type Error struct {
	Line, Column int // 1-based; 0 when unknown
	Msg          string
	// Limit marks what coda cannot read although the format allows it
	// (YAML's complex keys): coda's limit, not a mistake in the answer.
	Limit bool
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

// A Format is one answer format coda knows by name: how it is spelled,
// named, offered and checked. Adding a format is one entry of the table.
type Format struct {
	Label   string   // canonical, lower case: "json"
	Aliases []string // other spellings, lower case: "application/json"
	Name    string   // how prose and feedback name it: "JSON", "plain text"
	// Rule is what the check enforces, as the model is told it; "" when
	// nothing is checked.
	Rule string
	// Picker is the format's place in the editor's format picker (1 is
	// first), with Title as its display name; 0 keeps it out of the picker.
	Picker int
	Title  string

	check  func(string) error        // well-formedness; nil: carried through unchecked
	decode func(string) (any, error) // data for a JSON Schema; nil: a schema does not apply
}

// table is every format coda knows, in the order initialize advertises
// the checked ones.
var table = []Format{
	{Label: "json", Aliases: []string{"application/json"}, Name: "JSON",
		Rule:   "exactly one JSON value, with nothing before or after it",
		Picker: 2, Title: "JSON", check: checkJSON, decode: decodeJSON},
	{Label: "xml", Aliases: []string{"application/xml", "text/xml"}, Name: "XML",
		Rule:   "one root element, no text outside it, no duplicate attributes",
		Picker: 3, Title: "XML", check: checkXML},
	{Label: "csv", Aliases: []string{"text/csv"}, Name: "CSV",
		Rule:   "CSV (RFC 4180): at least one row, every row with the same number of fields",
		Picker: 4, Title: "CSV", check: checkCSV},
	{Label: "yaml", Aliases: []string{"yml", "application/yaml", "text/yaml"}, Name: "YAML",
		Rule:   "a YAML document whose top level is a mapping or a sequence",
		Picker: 5, Title: "YAML", check: checkYAML, decode: framed(kindYAML, decodeYAML)},
	{Label: "toml", Aliases: []string{"application/toml"}, Name: "TOML",
		Rule:   "a TOML 1.0 document",
		Picker: 6, Title: "TOML", check: checkTOML, decode: framed(kindTOML, decodeTOML)},
	{Label: "markdown", Aliases: []string{"md", "text/markdown"}, Name: "Markdown",
		Rule:   "not wrapped whole in a code fence, every code fence closed",
		Picker: 1, Title: "Markdown", check: checkMarkdown},
	{Label: "text", Aliases: []string{"text/plain", "txt"}, Name: "plain text",
		Picker: 7, Title: "Text"},
}

// byLabel finds a table entry by its label or any alias.
var byLabel = func() map[string]*Format {
	m := map[string]*Format{}
	for i := range table {
		f := &table[i]
		for _, l := range append([]string{f.Label}, f.Aliases...) {
			if m[l] != nil {
				panic("validators: format label " + l + " is in the table twice")
			}
			m[l] = f
		}
	}
	return m
}()

// Formats returns the table: every format coda knows.
func Formats() []Format { return slices.Clone(table) }

// PickerFormats returns the formats offered in the editor's picker, in
// their order there.
func PickerFormats() []Format {
	var p []Format
	for _, f := range table {
		if f.Picker > 0 {
			p = append(p, f)
		}
	}
	slices.SortFunc(p, func(a, b Format) int { return cmp.Compare(a.Picker, b.Picker) })
	return p
}

// Lookup finds a format by any spelling of its label (case and
// surrounding space ignored, aliases resolved).
func Lookup(label string) (Format, bool) {
	if f := byLabel[strings.ToLower(strings.TrimSpace(label))]; f != nil {
		return *f, true
	}
	return Format{}, false
}

// HasParser reports whether the format has a built-in check.
func (f Format) HasParser() bool { return f.check != nil }

// HasDecoder reports whether the format's data can be decoded for a JSON
// Schema (json, yaml and toml).
func (f Format) HasDecoder() bool { return f.decode != nil }

// Canonical returns the label's canonical spelling: trimmed, lower-cased,
// aliases resolved ("md" → "markdown", "application/json" → "json").
// Labels coda does not know are returned trimmed and lower-cased.
func Canonical(label string) string {
	if f, ok := Lookup(label); ok {
		return f.Label
	}
	return strings.ToLower(strings.TrimSpace(label))
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

// Check reports why content is not well-formed for format, or nil. A format
// with no built-in parser is carried through unchecked (nil). The error is
// an *Error, worded for the model that wrote content.
func Check(format, content string) error {
	if f, _ := Lookup(format); f.check != nil {
		return f.check(content)
	}
	return nil
}

// Decode returns the answer's data as JSON-like Go values, ready for a JSON
// Schema: map[string]any, []any, string, float64, int64, bool and nil. YAML
// keys become strings; TOML and YAML dates and times become strings. It
// applies the rules of Check first, so an answer Check refuses is refused
// here with the same *Error.
func Decode(format, content string) (any, error) {
	f, _ := Lookup(format)
	if f.decode == nil {
		return nil, fmt.Errorf("validators: no decoder for format %q", format)
	}
	return f.decode(content)
}
