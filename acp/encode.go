package acp

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// The encoders here build JSON by appending to a byte slice. They serve the
// hot path (a session/update per streamed chunk), where going through
// encoding/json's reflection would dominate the cost.

const hex = "0123456789abcdef"

// appendString appends s as a JSON string. It does not escape HTML
// characters, and replaces invalid UTF-8 with U+FFFD as encoding/json does.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		// U+2028 and U+2029 are valid JSON but break some JavaScript readers.
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

func appendInt(b []byte, n int64) []byte { return strconv.AppendInt(b, n, 10) }

func appendBool(b []byte, v bool) []byte { return strconv.AppendBool(b, v) }

// appendStrings appends a JSON array of strings.
func appendStrings(b []byte, ss []string) []byte {
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, s)
	}
	return append(b, ']')
}

// appendJSON appends v through encoding/json, for the cold paths; a value
// that cannot be encoded is written as null.
func appendJSON(b []byte, v any) []byte {
	out, err := encodeJSON(b, v)
	if err != nil {
		return append(b, "null"...)
	}
	return out
}

// encodeJSON appends v as compact JSON without encoding/json's HTML
// escaping (valid, but it makes the wire harder to read).
func encodeJSON(b []byte, v any) ([]byte, error) {
	buf := bytes.NewBuffer(b)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// appendCompact appends raw JSON written by a model (tool arguments) as one
// compact value: whitespace between tokens is dropped, so the message stays
// one line whatever the model's layout, and strings get appendString's
// escapes for U+2028, U+2029 and invalid UTF-8. Anything that is not one
// valid JSON value goes as a JSON string.
func appendCompact(b, raw []byte) []byte {
	if !json.Valid(raw) {
		return appendString(b, string(raw))
	}
	inString, escaped := false, false
	for i := 0; i < len(raw); {
		c := raw[i]
		switch {
		case !inString:
			switch c {
			case ' ', '\t', '\n', '\r':
			case '"':
				inString = true
				b = append(b, c)
			default:
				b = append(b, c)
			}
		case escaped:
			escaped = false
			b = append(b, c)
		case c == '\\':
			escaped = true
			b = append(b, c)
		case c == '"':
			inString = false
			b = append(b, c)
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(raw[i:])
			switch {
			case r == utf8.RuneError && size == 1:
				b = append(b, `\ufffd`...)
			case r == '\u2028' || r == '\u2029':
				b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
			default:
				b = append(b, raw[i:i+size]...)
			}
			i += size
			continue
		default:
			b = append(b, c)
		}
		i++
	}
	return b
}
