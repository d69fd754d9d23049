package acp

import (
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

// appendJSON appends v through encoding/json, for the cold paths.
func appendJSON(b []byte, v any) []byte {
	out, err := marshal(v)
	if err != nil {
		return append(b, "null"...)
	}
	return append(b, out...)
}

// marshal is json.Marshal without HTML escaping.
func marshal(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return unescapeHTML(b), nil
}

// unescapeHTML undoes encoding/json's \u003c, \u003e and \u0026 escapes,
// which are valid but make the wire harder to read.
func unescapeHTML(b []byte) []byte {
	out := b[:0]
	for i := 0; i < len(b); i++ {
		if b[i] == '\\' && i+5 < len(b) && b[i+1] == 'u' && b[i+2] == '0' && b[i+3] == '0' {
			switch string(b[i+4 : i+6]) {
			case "3c":
				out = append(out, '<')
				i += 5
				continue
			case "3e":
				out = append(out, '>')
				i += 5
				continue
			case "26":
				out = append(out, '&')
				i += 5
				continue
			}
		}
		if b[i] == '\\' && i+1 < len(b) {
			out = append(out, b[i], b[i+1])
			i++
			continue
		}
		out = append(out, b[i])
	}
	return out
}
