package validators

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
)

func checkJSON(content string) error {
	dec := json.NewDecoder(strings.NewReader(content))
	var v any
	if err := dec.Decode(&v); err != nil {
		return &Error{Msg: "not JSON: " + err.Error()}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return &Error{Msg: "more than one JSON value: text after the first value"}
	}
	return nil
}
