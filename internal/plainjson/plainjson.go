// Package plainjson encodes JSON as people, pipelines and models read it:
// with <, > and & as they are, not HTML-escaped. The run records (store),
// the answer record a model is given (engine) and the arguments the taint
// gate shows masked (engine/taint) are encoded so.
package plainjson

import (
	"bytes"
	"encoding/json"
)

// Marshal encodes v without HTML escapes, indented by indent ("" writes
// one line), ending in a newline.
func Marshal(v any, indent string) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", indent)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
