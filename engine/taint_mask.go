package engine

import (
	"regexp"
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
// away. Words without a letter or digit (`-----`, `{`) are kept.
func MaskLine(line string) string {
	line = strings.TrimSpace(line)
	if m := keyValue.FindStringSubmatchIndex(line); m != nil {
		return line[:m[3]] + maskValue(line[m[3]:])
	}
	words := strings.Fields(line)
	for i, w := range words {
		if strings.IndexFunc(w, isAlnum) >= 0 {
			words[i] = maskWord(w)
		}
	}
	return strings.Join(words, " ")
}

// keyValue finds a line's key and separator: `KEY=`, `export KEY=`,
// `key: `, `"key": `. Group 1 ends where the value starts.
var keyValue = regexp.MustCompile(`^((?:export\s+)?["']?[A-Za-z_][A-Za-z0-9_.\-]*["']?\s*[:=]\s*)`)

// maskLong is the shortest value or word of which MaskLine shows anything.
const maskLong = 12

// maskValue masks a value, keeping its quotes and a trailing `,` or `;`.
func maskValue(v string) string {
	core, tail := v, ""
	if n := len(core); n > 0 && (core[n-1] == ',' || core[n-1] == ';') {
		core, tail = core[:n-1], core[n-1:]
	}
	if n := len(core); n >= 2 && (core[0] == '"' || core[0] == '\'') && core[n-1] == core[0] {
		return core[:1] + maskWord(core[1:n-1]) + core[n-1:] + tail
	}
	return maskWord(core) + tail
}

// maskWord shows the first 3 and last 2 characters of a long word, and
// nothing of a short one.
func maskWord(w string) string {
	n := utf8.RuneCountInString(w)
	switch {
	case n == 0:
		return ""
	case n < maskLong:
		return "…"
	}
	r := []rune(w)
	return string(r[:3]) + "…" + string(r[n-2:])
}

func isAlnum(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
