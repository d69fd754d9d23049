package validators

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// The fast path of YAML decoding (issue 14). goccy/go-yaml is what coda's
// YAML checks are made of: every error's line and column, duplicate keys,
// the alias bound. It builds a token list and a syntax tree before any
// value, which makes it the slow half of a YAML answer's check. So an
// answer is first read by a small decoder of its own that builds the
// values straight from the text, for a plain subset of YAML that goccy
// reads alike: single-line plain scalars that are letters-first strings,
// decimal integers and floats, true, false and null; quoted strings
// without escapes or line breaks; block mappings of such keys and block
// sequences in a plain layout; flow collections on one line; comments.
// Anything else (an anchor, an alias, a tag, a merge key, a block scalar,
// a folded or multi-line scalar, a duplicate key, a second document, a
// tab or an unusual line break, a number in another notation, anything it
// does not know) is left to the goccy path, which decides and words every
// refusal. FuzzYAML_fast holds the two to the same data, from a corpus of
// answers and files as models write them (testdata/fuzz/FuzzYAML_fast).
//
// It earns its place at the sizes where a check is felt: BenchmarkFastYAML
// measures both in one run, and a plain 256 KiB answer takes 3.4 ms and
// 1.5 MB here against goccy's 47 ms and 38 MB (32 KiB: 0.4 ms against
// 6 ms).

// fastYAML decodes content as decodeYAML would, or reports false when it
// is not sure to: the caller then takes the goccy path.
func fastYAML(content string) (any, bool) {
	if !fastYAMLText(content) {
		return nil, false
	}
	p := plainYAML{s: content}
	p.next()
	if p.eof || p.ind != 0 {
		return nil, false
	}
	v, ok := p.block(0)
	if !ok || !p.eof {
		return nil, false
	}
	return v, true
}

// fastYAMLText reports whether content's text is plain enough for the fast
// path: one document (no line starting "---", "..." or a directive), no
// tag, no tab, no line break other than \n, no control character and no
// BOM.
func fastYAMLText(content string) bool {
	for i := 0; i < len(content); i++ {
		c := content[i]
		switch {
		case c < 0x20 && c != '\n', c == 0x7f:
			return false
		case c == 0xC2 && i+1 < len(content) && content[i+1] == 0x85: // NEL
			return false
		case c == 0xE2 && i+2 < len(content) && content[i+1] == 0x80 && (content[i+2] == 0xA8 || content[i+2] == 0xA9): // LS, PS
			return false
		case c == 0xEF && strings.HasPrefix(content[i:], "\ufeff"):
			return false
		case c == '!' && (i == 0 || strings.IndexByte(" \n[{,", content[i-1]) >= 0):
			return false // a tag, "!" alone included
		case c == '\n' || i == 0:
			rest := content[i:]
			if c == '\n' {
				rest = content[i+1:]
			}
			if strings.HasPrefix(rest, "---") || strings.HasPrefix(rest, "...") || strings.HasPrefix(rest, "%") {
				return false
			}
		}
	}
	return utf8.ValidString(content)
}

// plainYAML reads the plain subset line by line. The layout it takes: a
// block mapping's keys one per line in one column, each value on its
// key's line, or on the lines after it as a block collection further in
// (a block sequence may stand in the key's column); a block sequence's
// items each right after its "- ", the dashes in one column; a flow
// collection on one line. Strings are slices of the content, not copies.
type plainYAML struct {
	s          string
	start, end int  // the current line is s[start:end], without its "\n"
	ind        int  // its indentation, in spaces
	after      int  // where the line after it starts
	eof        bool // no line is left
	depth      int  // collections open, bounded by maxYAMLDepth
}

// next moves to the next line that is neither blank nor only a comment.
func (p *plainYAML) next() {
	for p.after < len(p.s) {
		p.start = p.after
		if i := strings.IndexByte(p.s[p.start:], '\n'); i >= 0 {
			p.end, p.after = p.start+i, p.start+i+1
		} else {
			p.end, p.after = len(p.s), len(p.s)
		}
		ind := p.start
		for ind < p.end && p.s[ind] == ' ' {
			ind++
		}
		if ind < p.end && p.s[ind] != '#' {
			p.ind = ind - p.start
			return
		}
	}
	p.eof = true
}

// rest is the current line from column col (0-based) on.
func (p *plainYAML) rest(col int) string { return p.s[p.start+col : p.end] }

// block reads the block collection that starts at column col of the
// current line, and the lines that belong to it.
func (p *plainYAML) block(col int) (any, bool) {
	if p.depth++; p.depth > maxYAMLDepth {
		return nil, false
	}
	var v any
	var ok bool
	if t := p.rest(col); t == "-" || strings.HasPrefix(t, "- ") {
		v, ok = p.seq(col)
	} else {
		v, ok = p.mapping(col)
	}
	p.depth--
	return v, ok
}

func (p *plainYAML) seq(col int) (any, bool) {
	s := []any{}
	for {
		t := p.rest(col)
		if !strings.HasPrefix(t, "- ") || len(t) == 2 || t[2] == ' ' {
			return nil, false // an empty item, or one further in
		}
		var v any
		var ok bool
		if item := t[2:]; item[0] != '[' && item[0] != '{' && (item == "-" || strings.HasPrefix(item, "- ") || hasKey(item)) {
			v, ok = p.block(col + 2) // "- - x", "- key: value"
		} else if v, ok = inline(item, &p.depth); ok {
			p.next()
		}
		if !ok {
			return nil, false
		}
		s = append(s, v)
		switch {
		case p.eof || p.ind < col:
			return s, true
		case p.ind > col:
			return nil, false
		case !strings.HasPrefix(p.rest(col), "-"):
			return s, true // a key after a sequence in its column
		}
	}
}

func (p *plainYAML) mapping(col int) (any, bool) {
	m := map[string]any{}
	for {
		key, t, ok := blockKey(p.rest(col))
		if !ok {
			return nil, false
		}
		if _, dup := m[key]; dup {
			return nil, false // goccy words the refusal
		}
		var v any
		switch t = strings.TrimLeft(t, " "); {
		case t == "":
			p.next()
			switch {
			case p.eof || p.ind < col:
			case p.ind == col:
				if r := p.rest(col); r == "-" || strings.HasPrefix(r, "- ") {
					v, ok = p.block(col)
				}
			default:
				v, ok = p.block(p.ind)
			}
		case t[0] == '#':
			return nil, false
		default:
			if v, ok = inline(t, &p.depth); ok {
				p.next()
			}
		}
		if !ok {
			return nil, false
		}
		m[key] = v
		switch {
		case p.eof || p.ind < col:
			return m, true
		case p.ind > col:
			return nil, false
		}
	}
}

// hasKey reports whether t, an item's text after its "- ", starts with a
// mapping key: a scalar followed by ":" and a space or the line's end.
func hasKey(t string) bool {
	if t[0] == '"' || t[0] == '\'' {
		end := strings.IndexByte(t[1:], t[0])
		return end >= 0 && colonEnds(t[2+end:])
	}
	for i := 0; i < len(t); i++ {
		switch {
		case t[i] == ':' && colonEnds(t[i:]):
			return true
		case t[i] == '#' && (i == 0 || t[i-1] == ' '):
			return false
		}
	}
	return false
}

// colonEnds reports whether t starts with ":" followed by a space or
// nothing.
func colonEnds(t string) bool {
	return len(t) > 0 && t[0] == ':' && (len(t) == 1 || t[1] == ' ')
}

// blockKey reads a block mapping's key at the start of t: a letters-first
// plain string or a quoted one, then ":" and a space or the line's end.
// It returns the key and what follows the ":".
func blockKey(t string) (string, string, bool) {
	if t[0] == '"' || t[0] == '\'' {
		key, n, ok := quoted(t)
		if !ok || key == "" || !colonEnds(t[n:]) {
			return "", "", false
		}
		return key, t[n+1:], true
	}
	for i := 0; i < len(t); i++ {
		if t[i] == ':' {
			if !colonEnds(t[i:]) || !plainKey(t[:i]) {
				return "", "", false
			}
			return t[:i], t[i+1:], true
		}
		if t[i] == '#' && (i == 0 || t[i-1] == ' ') {
			return "", "", false
		}
	}
	return "", "", false
}

// plainKey reports whether k is a plain key both read as that string.
// goccy reads a key with "<<" in it ("A<<") as a merge key.
func plainKey(k string) bool {
	v, ok := plainScalar(k)
	_, isString := v.(string)
	return ok && isString && k[len(k)-1] != ' ' && !strings.Contains(k, "<<")
}

// inline reads a value that ends its line: a scalar or a flow collection,
// then nothing or a comment.
func inline(t string, depth *int) (any, bool) {
	switch t[0] {
	case '[', '{':
		v, n, ok := flow(t, 0, depth)
		return v, ok && lineEnds(t[n:])
	case '"', '\'':
		v, n, ok := quoted(t)
		return v, ok && lineEnds(t[n:])
	}
	if i := strings.Index(t, " #"); i >= 0 {
		t = t[:i]
	}
	t = strings.TrimRight(t, " ")
	if strings.Contains(t, ": ") || strings.HasSuffix(t, ":") {
		return nil, false // "a: b: c"
	}
	return plainScalar(t)
}

// lineEnds reports whether what follows a value on its line ends it:
// nothing, or a comment after a space.
func lineEnds(rest string) bool {
	t := strings.TrimLeft(rest, " ")
	return t == "" || t[0] == '#' && len(t) < len(rest)
}

// flow reads the flow collection that opens at t[i], closed on the same
// line, and returns it with the index after its close.
func flow(t string, i int, depth *int) (any, int, bool) {
	if *depth++; *depth > maxYAMLDepth {
		return nil, 0, false
	}
	defer func() { *depth-- }()
	isMap := t[i] == '{'
	closer := byte(']')
	if isMap {
		closer = '}'
	}
	var m map[string]any
	var s []any
	if isMap {
		m = map[string]any{}
	} else {
		s = []any{}
	}
	i = skipSpaces(t, i+1)
	if i < len(t) && t[i] == closer {
		if isMap {
			return m, i + 1, true
		}
		return s, i + 1, true
	}
	for {
		var key string
		if isMap {
			var ok bool
			if key, i, ok = flowKey(t, i); !ok {
				return nil, 0, false
			}
			if _, dup := m[key]; dup {
				return nil, 0, false
			}
		}
		v, n, ok := flowValue(t, i, depth)
		if !ok {
			return nil, 0, false
		}
		if isMap {
			m[key] = v
		} else {
			s = append(s, v)
		}
		i = skipSpaces(t, n)
		switch {
		case i < len(t) && t[i] == ',':
			if i = skipSpaces(t, i+1); i >= len(t) || t[i] == closer || t[i] == ',' {
				return nil, 0, false // a trailing or doubled comma
			}
		case i < len(t) && t[i] == closer:
			if isMap {
				return m, i + 1, true
			}
			return s, i + 1, true
		default:
			return nil, 0, false
		}
	}
}

// flowKey reads a flow mapping's key at t[i] and the ": " after it, and
// returns the key with the index of its value.
func flowKey(t string, i int) (string, int, bool) {
	if i >= len(t) {
		return "", 0, false
	}
	if t[i] == '"' || t[i] == '\'' {
		key, n, ok := quoted(t[i:])
		if !ok || key == "" || !strings.HasPrefix(t[i+n:], ": ") {
			return "", 0, false
		}
		return key, skipSpaces(t, i+n+2), true
	}
	j := i
	for j < len(t) && strings.IndexByte(":,[]{}#", t[j]) < 0 {
		j++
	}
	if !strings.HasPrefix(t[j:], ": ") || !plainKey(t[i:j]) {
		return "", 0, false
	}
	return t[i:j], skipSpaces(t, j+2), true
}

// flowValue reads a value in a flow collection at t[i], and returns it
// with the index after it.
func flowValue(t string, i int, depth *int) (any, int, bool) {
	if i >= len(t) {
		return nil, 0, false
	}
	switch t[i] {
	case '[', '{':
		return flow(t, i, depth)
	case '"', '\'':
		v, n, ok := quoted(t[i:])
		return v, i + n, ok
	}
	j := i
	for j < len(t) && strings.IndexByte(":,[]{}#", t[j]) < 0 {
		j++
	}
	if j >= len(t) || t[j] != ',' && t[j] != ']' && t[j] != '}' {
		return nil, 0, false // a pair in a sequence, a comment, a bracket
	}
	v := strings.TrimRight(t[i:j], " ")
	if v == "" {
		return nil, 0, false
	}
	x, ok := plainScalar(v)
	return x, j, ok
}

func skipSpaces(t string, i int) int {
	for i < len(t) && t[i] == ' ' {
		i++
	}
	return i
}

// quoted reads the quoted string t starts with, closed on its line,
// without escapes: a backslash or a doubled single quote is left to goccy.
// It returns the string and the length of its source.
func quoted(t string) (string, int, bool) {
	q := t[0]
	end := strings.IndexByte(t[1:], q)
	if end < 0 {
		return "", 0, false
	}
	raw := t[1 : 1+end]
	if strings.IndexByte(raw, '\\') >= 0 || q == '\'' && strings.HasPrefix(t[2+end:], "'") {
		return "", 0, false
	}
	return raw, 2 + end, true
}

// plainScalar resolves a plain scalar as both decoders do, or reports
// false for one they may not read alike.
func plainScalar(v string) (any, bool) {
	if v == "" {
		return nil, false
	}
	switch c := v[0]; {
	case v == "true" || v == "false":
		return v == "true", true
	case v == "null" || v == "~":
		return nil, true
	case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		if reservedYAML(v) {
			return nil, false
		}
		return v, true
	case c == '-' || c >= '0' && c <= '9':
		return yamlNumber(v)
	}
	return nil, false
}

// reservedYAML reports words some YAML reader takes for a boolean, a null
// or a number: left to goccy whatever their case.
func reservedYAML(v string) bool {
	switch strings.ToLower(v) {
	case "true", "false", "yes", "no", "on", "off", "y", "n", "null", "nan", "inf":
		return true
	}
	return false
}

// yamlNumber reads a plain scalar that starts like a number: decimal
// integers that fit int64 and decimal fractions; any other notation is
// left to goccy.
func yamlNumber(v string) (any, bool) {
	digits := strings.TrimPrefix(v, "-")
	intPart, frac, isFloat := strings.Cut(digits, ".")
	if intPart == "" || (len(intPart) > 1 && intPart[0] == '0') || !allDigits(intPart) {
		return nil, false
	}
	if !isFloat {
		if v == "-0" {
			return nil, false
		}
		n, err := strconv.ParseInt(v, 10, 64)
		return n, err == nil
	}
	if frac == "" || !allDigits(frac) {
		return nil, false
	}
	x, err := strconv.ParseFloat(v, 64)
	return x, err == nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
