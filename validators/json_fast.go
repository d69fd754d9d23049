package validators

import (
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// The fast path of JSON decoding (issue 14). decodeJSON's encoding/json
// path reads an answer three times (the decoder's scan, its decode, the
// duplicate-key scan), copies every string and number out of it, and
// converts json.Numbers afterwards: 4 ms and 2.7 MB for 256 KiB, all of it
// garbage the schema check's collector then pays for again. fastJSON reads
// the answer once and keeps its strings as pieces of it. It only decodes
// what encoding/json decodes to the same values: anything it does not
// accept (malformed text, a duplicate key, deep nesting) is left to the
// encoding/json path, which decides and words every refusal.
// FuzzJSON_fast holds the two to the same data.

// fastJSONDepth bounds the nesting fastJSON reads; deeper documents take
// the encoding/json path, whose own bound is 10000.
const fastJSONDepth = 1000

// fastJSON decodes content as decodeJSON would, or reports false when it
// is not sure to: the caller then takes the encoding/json path.
func fastJSON(content string) (any, bool) {
	p := jsonReader{s: content}
	v, ok := p.value()
	if !ok {
		return nil, false
	}
	p.space()
	return v, p.i == len(p.s)
}

// jsonReader reads JSON values from s, starting at i.
type jsonReader struct {
	s     string
	i     int
	depth int
}

func (p *jsonReader) space() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jsonReader) value() (any, bool) {
	p.space()
	if p.i >= len(p.s) {
		return nil, false
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		return p.string()
	case c == '-' || '0' <= c && c <= '9':
		return p.number()
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	}
	return nil, false
}

func (p *jsonReader) literal(word string) bool {
	if len(p.s)-p.i < len(word) || p.s[p.i:p.i+len(word)] != word {
		return false
	}
	p.i += len(word)
	return true
}

// enter and leave count nesting; enter fails past fastJSONDepth.
func (p *jsonReader) enter() bool {
	p.depth++
	p.i++ // the bracket
	return p.depth <= fastJSONDepth
}

func (p *jsonReader) object() (any, bool) {
	if !p.enter() {
		return nil, false
	}
	m := map[string]any{}
	p.space()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		p.depth--
		return m, true
	}
	for {
		p.space()
		if p.i >= len(p.s) || p.s[p.i] != '"' {
			return nil, false
		}
		k, ok := p.string()
		if !ok {
			return nil, false
		}
		key := k.(string)
		if _, dup := m[key]; dup {
			return nil, false // jsonDuplicateKey words it
		}
		if !p.colon() {
			return nil, false
		}
		v, ok := p.value()
		if !ok {
			return nil, false
		}
		m[key] = v
		p.space()
		if p.i >= len(p.s) {
			return nil, false
		}
		switch p.s[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			p.depth--
			return m, true
		default:
			return nil, false
		}
	}
}

func (p *jsonReader) array() (any, bool) {
	if !p.enter() {
		return nil, false
	}
	a := []any{} // encoding/json's empty array is empty, not nil
	p.space()
	if p.i < len(p.s) && p.s[p.i] == ']' {
		p.i++
		p.depth--
		return a, true
	}
	for {
		v, ok := p.value()
		if !ok {
			return nil, false
		}
		a = append(a, v)
		p.space()
		if p.i >= len(p.s) {
			return nil, false
		}
		switch p.s[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			p.depth--
			return a, true
		default:
			return nil, false
		}
	}
}

// string reads a string at p.i (its opening quote). Without escapes, and
// in valid UTF-8, it is the text between the quotes as it stands, shared
// with s; otherwise unquote makes of it what encoding/json does.
func (p *jsonReader) string() (any, bool) {
	start := p.i + 1
	escaped, ascii := false, true
	for j := start; ; {
		for j < len(p.s) && plainASCII[p.s[j]] {
			j++
		}
		if j >= len(p.s) {
			return nil, false
		}
		switch c := p.s[j]; {
		case c == '"':
			p.i = j + 1
			text := p.s[start:j]
			if !escaped && (ascii || utf8.ValidString(text)) {
				return text, true
			}
			v, ok := unquote(text)
			return v, ok
		case c == '\\':
			escaped = true
			j += 2 // past the escaped byte, which may be a quote
		case c < ' ':
			return nil, false
		default:
			ascii = false
			j++
		}
	}
}

// plainASCII marks the bytes a JSON string holds as they stand: ASCII
// other than control characters, the quote and the backslash.
var plainASCII = func() (t [256]bool) {
	for c := ' '; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// number reads a number and converts it as decodeJSON does (jsonNumber).
func (p *jsonReader) number() (any, bool) {
	text, ok := p.numberText()
	if !ok {
		return nil, false
	}
	return jsonNumber(text), true
}

// numberText reads a number in JSON's grammar.
func (p *jsonReader) numberText() (string, bool) {
	s, start := p.s, p.i
	i := start
	if s[i] == '-' {
		i++
	}
	digits := func() bool {
		from := i
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
		return i > from
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case !digits():
		return "", false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if !digits() {
			return "", false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if !digits() {
			return "", false
		}
	}
	p.i = i
	return s[start:i], true
}

// skip reads past one value, checking it as encoding/json's scanner does
// and building nothing: strings are not unquoted, and bytes that are not
// UTF-8 pass, as they do there.
func (p *jsonReader) skip() bool {
	p.space()
	if p.i >= len(p.s) {
		return false
	}
	switch c := p.s[p.i]; {
	case c == '{' || c == '[':
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		if !p.enter() {
			return false
		}
		p.space()
		if p.i < len(p.s) && p.s[p.i] == end {
			p.i++
			p.depth--
			return true
		}
		for {
			if c == '{' && !p.key() {
				return false
			}
			if !p.skip() {
				return false
			}
			p.space()
			if p.i >= len(p.s) {
				return false
			}
			switch p.s[p.i] {
			case ',':
				p.i++
			case end:
				p.i++
				p.depth--
				return true
			default:
				return false
			}
		}
	case c == '"':
		return p.skipString()
	case c == '-' || '0' <= c && c <= '9':
		_, ok := p.numberText()
		return ok
	case c == 't':
		return p.literal("true")
	case c == 'f':
		return p.literal("false")
	case c == 'n':
		return p.literal("null")
	}
	return false
}

// key reads past an object's key and its colon.
func (p *jsonReader) key() bool {
	p.space()
	return p.i < len(p.s) && p.s[p.i] == '"' && p.skipString() && p.colon()
}

// colon reads past the colon after an object's key.
func (p *jsonReader) colon() bool {
	p.space()
	if p.i >= len(p.s) || p.s[p.i] != ':' {
		return false
	}
	p.i++
	return true
}

// skipString reads past a string at p.i, checking its escapes.
func (p *jsonReader) skipString() bool {
	for j := p.i + 1; ; j++ {
		for j < len(p.s) && plainASCII[p.s[j]] {
			j++
		}
		if j >= len(p.s) {
			return false
		}
		switch c := p.s[j]; {
		case c == '"':
			p.i = j + 1
			return true
		case c == '\\':
			if j+1 >= len(p.s) {
				return false
			}
			j++
			switch p.s[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if hex4(p.s[j+1:]) < 0 {
					return false
				}
				j += 4
			default:
				return false
			}
		case c < ' ':
			return false
		}
	}
}

// unquote decodes the text of a JSON string (between its quotes) as
// encoding/json does: a \u escape of half a surrogate pair, like a byte
// that is not UTF-8, becomes U+FFFD. ok is false for text that no JSON
// string has: a bad escape, a quote or a control character.
func unquote(text string) (string, bool) {
	var b strings.Builder
	b.Grow(len(text))
	for r := 0; r < len(text); {
		switch c := text[r]; {
		case c == '\\':
			if r+1 >= len(text) {
				return "", false
			}
			switch e := text[r+1]; e {
			case '"', '\\', '/':
				b.WriteByte(e)
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'u':
				rr := hex4(text[r+2:])
				if rr < 0 {
					return "", false
				}
				r += 6
				if utf16.IsSurrogate(rr) {
					if r+1 < len(text) && text[r] == '\\' && text[r+1] == 'u' {
						if dec := utf16.DecodeRune(rr, hex4(text[r+2:])); dec != unicode.ReplacementChar {
							b.WriteRune(dec)
							r += 6
							continue
						}
					}
					rr = unicode.ReplacementChar
				}
				b.WriteRune(rr)
				continue
			default:
				return "", false
			}
			r += 2
		case c == '"' || c < ' ':
			return "", false
		default:
			if n := plainRun(text[r:]); n > 0 {
				b.WriteString(text[r : r+n])
				r += n
				continue
			}
			b.WriteRune(utf8.RuneError) // a byte that is not UTF-8
			r++
		}
	}
	return b.String(), true
}

// plainRun measures the text that starts s and unquotes to itself: UTF-8
// without escapes, quotes or control characters.
func plainRun(s string) int {
	i := 0
	for i < len(s) {
		if plainASCII[s[i]] {
			i++
			continue
		}
		if s[i] < utf8.RuneSelf {
			break
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			break
		}
		i += size
	}
	return i
}

// hex4 reads the four hexadecimal digits that start s, or returns -1.
func hex4(s string) rune {
	if len(s) < 4 {
		return -1
	}
	var r rune
	for _, c := range []byte(s[:4]) {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// JSONMembers splits text, one JSON object, into the texts of its members'
// values, as json.Unmarshal into a map[string]json.RawMessage does (each
// value as written, the last member winning when a key repeats), without
// copying them: a 256 KiB answer in a tool call's arguments is read once.
// ok is false when text is not a JSON object, or is one to leave to
// encoding/json (nested deeper than this reader goes).
func JSONMembers(text string) (members map[string]string, ok bool) {
	p := jsonReader{s: text}
	p.space()
	if p.i >= len(p.s) || p.s[p.i] != '{' || !p.enter() {
		return nil, false
	}
	members = map[string]string{}
	p.space()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
	} else {
		for {
			p.space()
			if p.i >= len(p.s) || p.s[p.i] != '"' {
				return nil, false
			}
			k, ok := p.string()
			if !ok || !p.colon() {
				return nil, false
			}
			p.space()
			start := p.i
			if !p.skip() {
				return nil, false
			}
			members[k.(string)] = p.s[start:p.i]
			p.space()
			if p.i >= len(p.s) {
				return nil, false
			}
			if p.s[p.i] == '}' {
				p.i++
				break
			}
			if p.s[p.i] != ',' {
				return nil, false
			}
			p.i++
		}
	}
	p.space()
	return members, p.i == len(p.s)
}

// JSONString decodes text, a JSON string as written, as json.Unmarshal
// does; ok is false when text is not one.
func JSONString(text string) (string, bool) {
	p := jsonReader{s: text}
	p.space()
	if p.i >= len(p.s) || p.s[p.i] != '"' {
		return "", false
	}
	v, ok := p.string()
	p.space()
	if !ok || p.i != len(p.s) {
		return "", false
	}
	return v.(string), true
}
