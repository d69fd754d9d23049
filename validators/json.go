package validators

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// checkJSON accepts exactly one JSON value with nothing after it, with no
// key twice in one object. The common case, a good answer, costs one
// json.Valid and a scan for duplicate keys; only a failure pays for the
// diagnosis.
func checkJSON(content string) error {
	if json.Valid([]byte(content)) {
		if e := jsonDuplicateKey(content); e != nil {
			return e
		}
		return nil
	}
	return diagnoseJSON(content)
}

// jsonDuplicateKey finds the first key that appears twice in one object
// of content, which must be valid JSON, and names it by its JSON Pointer.
// encoding/json keeps the last of the two silently, so a schema would
// check one value and a reader may take the other. Keys compare as
// decoded ("a" and "\u0061" are one key, as are two bytes that are not
// UTF-8).
func jsonDuplicateKey(content string) *Error {
	type frame struct {
		object  bool
		wantKey bool           // objects: the next string is a key
		key     string         // objects: the member being read
		index   int            // arrays: the element being read
		keys    []string       // objects: keys seen, while few
		offsets []int          // where each of keys is
		set     map[string]int // objects: keys seen, once many
	}
	var stack []frame
	for i := 0; i < len(content); i++ {
		switch c := content[i]; c {
		case '{', '[':
			// Frames are reused, and with them their keys' storage.
			if len(stack) < cap(stack) {
				stack = stack[:len(stack)+1]
			} else {
				stack = append(stack, frame{})
			}
			top := &stack[len(stack)-1]
			*top = frame{object: c == '{', wantKey: c == '{', keys: top.keys[:0], offsets: top.offsets[:0]}
		case '}', ']':
			stack = stack[:len(stack)-1]
		case ',':
			if top := &stack[len(stack)-1]; top.object {
				top.wantKey = true
			} else {
				top.index++
			}
		case '"':
			start := i
			escaped := false
			for i++; content[i] != '"'; i++ {
				if content[i] == '\\' {
					escaped = true
					i++
				}
			}
			if len(stack) == 0 || !stack[len(stack)-1].wantKey {
				continue // a value
			}
			top := &stack[len(stack)-1]
			top.wantKey = false
			key := content[start+1 : i]
			if escaped || !utf8.ValidString(key) {
				// As encoding/json reads it: a byte that is not UTF-8 is U+FFFD.
				_ = json.Unmarshal([]byte(content[start:i+1]), &key) // valid JSON: cannot fail
			}
			first, dup := -1, false
			if top.set != nil {
				first, dup = top.set[key]
			} else if j := slices.Index(top.keys, key); j >= 0 {
				first, dup = top.offsets[j], true
			}
			if dup {
				var path []string
				for _, f := range stack[:len(stack)-1] {
					if f.object {
						path = append(path, f.key)
					} else {
						path = append(path, strconv.Itoa(f.index))
					}
				}
				line, col := position(content, first)
				return errorAt(content, start, "the key %s appears twice in one object (first at line %d, column %d): give each key once",
					pointer(append(path, key)), line, col)
			}
			top.key = key
			if top.set == nil && len(top.keys) < 16 {
				top.keys, top.offsets = append(top.keys, key), append(top.offsets, start)
				continue
			}
			if top.set == nil {
				top.set = make(map[string]int, 32)
				for j, k := range top.keys {
					top.set[k] = top.offsets[j]
				}
			}
			top.set[key] = start
		}
	}
	return nil
}

// diagnoseJSON says why content is not one JSON value, where, and in words
// a model can act on.
func diagnoseJSON(content string) *Error {
	if e := frame(content, kindJSON); e != nil {
		return e
	}
	trimmed := strings.TrimSpace(content)
	start := len(content) - len(strings.TrimLeftFunc(content, isSpace))
	if looksXML(trimmed) {
		return errorAt(content, start, "this is XML, but the answer must be JSON: submit the JSON value")
	}
	if !jsonStarts(trimmed) {
		if other := sniff(content); other != "" {
			return errorAt(content, start, "this is %s, but the answer must be JSON: submit the JSON value", other)
		}
		_, l1, _, _ := firstLines(content)
		return errorAt(content, start, "the answer is not JSON: it starts with %s where a JSON value was expected", quote(l1))
	}

	dec := json.NewDecoder(strings.NewReader(content))
	var raw json.RawMessage
	err := dec.Decode(&raw)
	var se *json.SyntaxError
	switch {
	case err == nil:
		off := int(dec.InputOffset())
		off += len(content[off:]) - len(strings.TrimLeftFunc(content[off:], isSpace))
		rest := content[off:]
		if rest != "" && (rest[0] == '{' || rest[0] == '[') {
			return errorAt(content, off, "a second JSON value starts here: submit exactly one JSON value (put several in an array)")
		}
		line, _, _ := strings.Cut(rest, "\n")
		return errorAt(content, off, "there is text after the JSON value (%s): submit the JSON value alone, with nothing after it", quote(strings.TrimSpace(line)))
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return unclosedJSON(content)
	case errors.As(err, &se):
		off := int(se.Offset) - 1
		if strings.Contains(se.Error(), "unexpected end") {
			return unclosedJSON(content)
		}
		if sniffTOML(content) {
			return errorAt(content, start, "this is TOML, but the answer must be JSON: submit the JSON value")
		}
		return errorAt(content, off, "%s", se.Error())
	}
	return &Error{Msg: "not JSON: " + err.Error()}
}

// unclosedJSON explains a JSON text that ends before its value does: which
// bracket or string is still open. The usual cause is a cut-off answer.
func unclosedJSON(content string) *Error {
	var stack []int // offsets of open brackets
	str := -1       // offset of the open string, or -1
	for i := 0; i < len(content); i++ {
		c := content[i]
		if str >= 0 {
			switch c {
			case '\\':
				i++
			case '"':
				str = -1
			}
			continue
		}
		switch c {
		case '"':
			str = i
		case '{', '[':
			stack = append(stack, i)
		case '}', ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		}
	}
	end := len(strings.TrimRightFunc(content, isSpace))
	switch {
	case str >= 0:
		line, col := position(content, str)
		return errorAt(content, end, "the JSON ends inside the string opened at line %d, column %d (was the answer cut off?): close the string and every open bracket", line, col)
	case len(stack) > 0:
		open := stack[len(stack)-1]
		line, col := position(content, open)
		more := ""
		if len(stack) > 1 {
			more = fmt.Sprintf(" (%d brackets are open in all)", len(stack))
		}
		return errorAt(content, end, "the JSON ends before the %c opened at line %d, column %d is closed%s: was the answer cut off?", content[open], line, col, more)
	}
	return errorAt(content, end, "the JSON ends in the middle of a value: was the answer cut off?")
}

// sniff names the format content is written in when it is clearly another
// one than JSON: "YAML" for key: value data, "TOML" for key = value data.
// It is only consulted on the failure path.
func sniff(content string) string {
	if sniffTOML(content) {
		return "TOML"
	}
	if v, err := decodeYAML(content); err == nil {
		switch v := v.(type) {
		case map[string]any:
			if len(v) > 0 {
				return "YAML"
			}
		case []any:
			if len(v) > 0 {
				return "YAML"
			}
		}
	}
	return ""
}

func sniffTOML(content string) bool {
	if !strings.Contains(content, "=") {
		return false
	}
	_, err := decodeTOML(content)
	return err == nil
}

// decodeJSON decodes one JSON value into generic Go values; numbers are
// int64 when they are integers that fit, float64 otherwise.
func decodeJSON(content string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(content))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, diagnoseJSON(content)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, diagnoseJSON(content)
	}
	if e := jsonDuplicateKey(content); e != nil {
		return nil, e
	}
	return numbers(v), nil
}

// numbers replaces json.Numbers with int64 or float64, in place.
func numbers(v any) any {
	switch v := v.(type) {
	case json.Number:
		return jsonNumber(string(v))
	case map[string]any:
		for k, x := range v {
			v[k] = numbers(x)
		}
	case []any:
		for i, x := range v {
			v[i] = numbers(x)
		}
	}
	return v
}

// jsonNumber converts a JSON number: to int64 when it is written as an
// integer that fits, to float64 otherwise.
func jsonNumber(s string) any {
	if !strings.ContainsAny(s, ".eE") {
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return i
		}
	}
	f, _ := strconv.ParseFloat(s, 64)
	return f
}
