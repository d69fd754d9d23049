package jsonrpc

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// The encoders here build JSON by appending to a byte slice. They serve the
// hot path, a session/update per streamed chunk: acp's update sink writes a
// chunk in 0.12 us with no allocation, encoding/json from a struct in
// 0.52 us with one (acp's BenchmarkUpdateSink_chunk runs both), and a
// 100,000-chunk turn streams at 694k updates a second against 579k in
// acpbench (the figure issue 14 held no worse). AppendString writes what
// encoding/json writes for a string with HTML escaping off, byte for byte:
// FuzzAppendString holds it to that, from testdata/fuzz/FuzzAppendString.

const hex = "0123456789abcdef"

// AppendString appends s as a JSON string, as an encoding/json Encoder
// with SetEscapeHTML(false) does: invalid UTF-8 becomes U+FFFD, and
// U+2028 and U+2029 are escaped (valid JSON, but they break some
// JavaScript readers).
func AppendString(b []byte, s string) []byte {
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
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
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

// AppendJSON appends v through encoding/json, for the cold paths; a value
// that cannot be encoded is written as null.
func AppendJSON(b []byte, v any) []byte {
	out, err := EncodeJSON(b, v)
	if err != nil {
		return append(b, "null"...)
	}
	return out
}

// EncodeJSON appends v as compact JSON without encoding/json's HTML
// escaping (valid, but it makes the wire harder to read).
func EncodeJSON(b []byte, v any) ([]byte, error) {
	buf := bytes.NewBuffer(b)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// AppendCompact appends raw JSON written by a model (tool arguments) as one
// compact value: json.Compact drops the whitespace between tokens, so the
// message stays one line whatever the model's layout, and the strings then
// get AppendString's spelling of invalid UTF-8, U+2028 and U+2029.
// Anything that is not one valid JSON value goes as a JSON string.
func AppendCompact(b, raw []byte) []byte {
	buf := bytes.NewBuffer(b)
	if json.Compact(buf, raw) != nil {
		return AppendString(b, string(raw))
	}
	out := buf.Bytes()
	value := out[len(b):]
	if utf8.Valid(value) && !bytes.Contains(value, lineSep) && !bytes.Contains(value, paraSep) {
		return out
	}
	// Past ASCII, valid JSON holds bytes only inside its strings, where
	// these escapes mean what the bytes did.
	value = bytes.Clone(value)
	for len(value) > 0 {
		r, size := utf8.DecodeRune(value)
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			b = append(b, value[:size]...)
		}
		value = value[size:]
	}
	return b
}

var lineSep, paraSep = []byte("\u2028"), []byte("\u2029")
