package taint

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaskLine shows a line of a private file with its secrets hidden: the one
// way the taint gate quotes private content (its audit, its log, the
// permission request, the model's refusal). A `KEY=VALUE` or `KEY: VALUE`
// line keeps its key and shows of the value its first 3 and last 2
// characters (`API_KEY=sk-…f3`); any other line shows each of its words the
// same way. A value or word shorter than maskLong characters shows nothing
// of itself (`PORT=…`): a few characters of a short secret would give it
// away. Words without a letter or digit (`-----`, `{`) are kept. What is
// shown is cut at maskMax characters.
func MaskLine(line string) string { return string(appendMaskLine(nil, line)) }

// appendMaskLine appends MaskLine(line) to dst.
func appendMaskLine(dst []byte, line string) []byte {
	start := len(dst)
	line = strings.TrimSpace(line)
	if at := valueAt(line); at >= 0 {
		dst = appendMaskValue(append(dst, line[:at]...), line[at:])
		return cutMasked(dst, start)
	}
	for i, w := range strings.Fields(line) {
		if i > 0 {
			dst = append(dst, ' ')
		}
		// As the gate compares it: `㋋` folds to "12月".
		if strings.IndexFunc(w, isAlnum) >= 0 || strings.IndexFunc(string(fold(nil, w)), isAlnum) >= 0 {
			dst = appendMaskWord(dst, w)
		} else {
			dst = append(dst, w...)
		}
	}
	return cutMasked(dst, start)
}

// maskMax is the most of a masked line shown, in characters: a long line
// is quoted to be recognised, not read.
const maskMax = 120

// cutMasked cuts what dst holds from start at maskMax characters.
func cutMasked(dst []byte, start int) []byte {
	if utf8.RuneCount(dst[start:]) <= maskMax {
		return dst
	}
	at := start
	for range maskMax - 2 {
		_, n := utf8.DecodeRune(dst[at:])
		at += n
	}
	return append(dst[:at], " …"...)
}

// valueAt returns where the value of a `KEY=VALUE` line starts (after
// `KEY=`, `export KEY=`, `key: `, `"key": `), or -1 when line (trimmed) is
// not one.
func valueAt(line string) int {
	i := 0
	if rest, ok := strings.CutPrefix(line, "export"); ok && len(rest) > 0 && (rest[0] == ' ' || rest[0] == '\t') {
		i = len(line) - len(strings.TrimLeft(rest, " \t"))
	}
	if i < len(line) && (line[i] == '"' || line[i] == '\'') {
		i++
	}
	if i >= len(line) || !(line[i] == '_' || isASCIILetter(line[i])) {
		return -1
	}
	for i < len(line) && (line[i] == '_' || line[i] == '.' || line[i] == '-' || isASCIILetter(line[i]) || '0' <= line[i] && line[i] <= '9') {
		i++
	}
	if i < len(line) && (line[i] == '"' || line[i] == '\'') {
		i++
	}
	for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
		i++
	}
	if i >= len(line) || (line[i] != '=' && line[i] != ':') {
		return -1
	}
	i++
	for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
		i++
	}
	return i
}

func isASCIILetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// maskLong is the shortest value or word of which MaskLine shows anything.
const maskLong = 12

// appendMaskValue appends a value masked, keeping its quotes and a
// trailing `,` or `;`.
func appendMaskValue(dst []byte, v string) []byte {
	core, tail := v, ""
	if n := len(core); n > 0 && (core[n-1] == ',' || core[n-1] == ';') {
		core, tail = core[:n-1], core[n-1:]
	}
	if n := len(core); n >= 2 && (core[0] == '"' || core[0] == '\'') && core[n-1] == core[0] {
		dst = appendMaskWord(append(dst, core[0]), core[1:n-1])
		return append(append(dst, core[n-1]), tail...)
	}
	return append(appendMaskWord(dst, core), tail...)
}

// appendMaskWord appends the first 3 and last 2 characters of a long
// word, and nothing of a short one.
func appendMaskWord(dst []byte, w string) []byte {
	n := utf8.RuneCountInString(w)
	switch {
	case n == 0:
		return dst
	case n < maskLong:
		return append(dst, "…"...)
	}
	if n == len(w) { // ASCII
		return append(append(append(dst, w[:3]...), "…"...), w[n-2:]...)
	}
	r := []rune(w)
	return append(append(append(dst, string(r[:3])...), "…"...), string(r[n-2:])...)
}

func isAlnum(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
