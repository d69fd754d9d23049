package validators

import (
	"bytes"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// The accept path of a schema check (issue 14). kaptinlin checks an
// "enum" by comparing the value with each member through reflection,
// allocating about 600 bytes a comparison and formatting every member it
// passes: for a 256 KiB answer with an enum on each of its 3000 items,
// 3.8 of the 9.6 MB the check allocates and a fifth of its time. Its
// "pattern" compares with no allocation at all. So a schema whose enums
// list only strings is compiled a second time with each such enum
// written as a type and a pattern that accept the same values ("quick");
// a document the quick schema accepts is accepted, and only one it
// refuses is checked by the schema as written, which words every
// violation. TestQuickSchema_agrees holds the two to the same verdicts.

// quickSource returns src with every enum of strings written as
// "type": "string" and a pattern matching exactly those strings, or nil
// when src has no such enum or is one to leave as it stands.
func quickSource(src []byte) []byte {
	if !utf8.Valid(src) || bytes.Contains(src, []byte(`\u`)) || jsonDuplicateKey(string(src)) != nil {
		return nil // decoding and encoding it again might change what it says
	}
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.UseNumber() // numbers are written back as they were
	var doc any
	if dec.Decode(&doc) != nil {
		return nil
	}
	if !quickEnums(doc) {
		return nil
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(doc) != nil {
		return nil
	}
	return b.Bytes()
}

// Keywords whose value is a schema, an array of schemas, or an object of
// schemas, in every draft CompileSchema takes. A schema anywhere else (an
// unknown keyword's) is left as it is.
var (
	subschema   = []string{"additionalItems", "additionalProperties", "contains", "contentSchema", "else", "if", "items", "not", "propertyNames", "then", "unevaluatedItems", "unevaluatedProperties"}
	subschemas  = []string{"allOf", "anyOf", "items", "oneOf", "prefixItems"}
	schemaTable = []string{"$defs", "definitions", "dependencies", "dependentSchemas", "patternProperties", "properties"}
)

// quickEnums rewrites, in place, the enums of strings in the schema v and
// the schemas inside it, reporting whether it rewrote any.
func quickEnums(v any) bool {
	s, ok := v.(map[string]any)
	if !ok {
		return false
	}
	changed := quickEnum(s)
	for k, x := range s {
		switch {
		case slices.Contains(subschema, k) && !isArray(x):
			changed = quickEnums(x) || changed
		case slices.Contains(subschemas, k) && isArray(x):
			for _, y := range x.([]any) {
				changed = quickEnums(y) || changed
			}
		case slices.Contains(schemaTable, k):
			if table, ok := x.(map[string]any); ok {
				for _, y := range table {
					changed = quickEnums(y) || changed
				}
			}
		}
	}
	return changed
}

func isArray(v any) bool {
	_, ok := v.([]any)
	return ok
}

// quickEnum rewrites s's own enum when every member is a string and s has
// no pattern of its own. The pattern matches a member and nothing else:
// each member is quoted, and RE2's $ is the end of the text. A member
// with U+FFFD is left alone (a byte that is not UTF-8 matches it in a
// pattern); so is an enum that a "type" of s already rules out.
func quickEnum(s map[string]any) bool {
	members, ok := s["enum"].([]any)
	if !ok || len(members) == 0 || s["pattern"] != nil {
		return false
	}
	quoted := make([]string, len(members))
	for i, m := range members {
		str, ok := m.(string)
		if !ok || strings.ContainsRune(str, utf8.RuneError) {
			return false
		}
		quoted[i] = regexp.QuoteMeta(str)
	}
	switch t := s["type"].(type) {
	case nil:
	case string:
		if t != "string" {
			return false
		}
	case []any:
		if !slices.Contains(t, any("string")) {
			return false
		}
	default:
		return false
	}
	pattern := "^(?:" + strings.Join(quoted, "|") + ")$"
	if _, err := regexp.Compile(pattern); err != nil {
		return false
	}
	delete(s, "enum")
	s["type"] = "string"
	s["pattern"] = pattern
	return true
}
