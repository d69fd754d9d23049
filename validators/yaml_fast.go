package validators

import (
	"strconv"
	"strings"
	"unicode/utf8"

	yamlv3 "go.yaml.in/yaml/v3"
)

// The fast path of YAML decoding (issue 14). goccy/go-yaml is what coda's
// YAML checks are made of: every error's line and column, duplicate keys,
// the alias bound. It is also twice as slow as go.yaml.in/yaml/v3, which
// gives no column for syntax errors. So an answer is first read with
// yaml/v3, and only a document made of what both read alike is decoded
// that way: plain, single-line scalars that are letters-first strings,
// decimal integers and floats, true, false and null; quoted strings
// without escapes or line breaks; block and flow mappings of such keys,
// and sequences. Anything else (an anchor, an alias, a tag, a merge key, a
// block scalar, a folded or multi-line scalar, a duplicate key, a second
// document, a tab or an unusual line break, a number in another notation,
// a document yaml/v3 refuses) is left to the goccy path, which decides
// and words every refusal. FuzzYAML_fast holds the two to the same data.

// fastYAML decodes content as decodeYAML would, or reports false when it
// is not sure to: the caller then takes the goccy path.
func fastYAML(content string) (any, bool) {
	if !fastYAMLText(content) {
		return nil, false
	}
	var doc yamlv3.Node
	if err := yamlv3.Unmarshal([]byte(content), &doc); err != nil {
		return nil, false
	}
	if doc.Kind != yamlv3.DocumentNode || len(doc.Content) != 1 {
		return nil, false
	}
	root := doc.Content[0]
	if root.Kind != yamlv3.MappingNode && root.Kind != yamlv3.SequenceNode || root.Style&yamlv3.FlowStyle != 0 {
		// A flow collection at the top: yaml/v3 reads past its end what
		// goccy refuses.
		return nil, false
	}
	if root.Column != 1 {
		return nil, false
	}
	f := fastDecoder{lines: strings.Split(content, "\n")}
	return f.value(root)
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

type fastDecoder struct {
	lines []string // the content's lines, to read each scalar where it stands
}

func (f *fastDecoder) value(n *yamlv3.Node) (any, bool) {
	if n.Anchor != "" || n.Style&yamlv3.TaggedStyle != 0 || !coreTag(n.Tag) {
		return nil, false
	}
	if n.Style&yamlv3.FlowStyle != 0 && !onLine(n, n.Line) {
		return nil, false
	}
	switch n.Kind {
	case yamlv3.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			key, ok := f.key(k)
			if !ok || !f.laidOut(n, i, k, v) {
				return nil, false
			}
			if _, dup := m[key]; dup {
				return nil, false // goccy words the refusal
			}
			x, ok := f.value(v)
			if !ok {
				return nil, false
			}
			m[key] = x
		}
		return m, true
	case yamlv3.SequenceNode:
		s := make([]any, len(n.Content))
		for i, c := range n.Content {
			if n.Style&yamlv3.FlowStyle == 0 && !f.item(n, i, c) {
				return nil, false
			}
			x, ok := f.value(c)
			if !ok {
				return nil, false
			}
			s[i] = x
		}
		return s, true
	case yamlv3.ScalarNode:
		return f.scalar(n)
	}
	return nil, false
}

// The layout the fast path takes: a block mapping's keys one per line in
// one column, each value on its key's line or further in (a block
// sequence may stand in the key's column); a block sequence's items each
// right after its dash, the dashes in one column; a flow collection on
// one line. yaml/v3 reads some other layouts that goccy refuses.

// laidOut checks the i-th key k of block mapping m and its value v.
func (f *fastDecoder) laidOut(m *yamlv3.Node, i int, k, v *yamlv3.Node) bool {
	if m.Style&yamlv3.FlowStyle != 0 {
		return true // onLine checked it
	}
	if k.Column != m.Content[0].Column || (i > 0 && k.Line <= m.Content[i-2].Line) {
		return false
	}
	switch {
	case v.Line == k.Line:
		return v.Column > k.Column
	case v.Line < k.Line:
		return false
	case v.Kind == yamlv3.SequenceNode && v.Style&yamlv3.FlowStyle == 0:
		return v.Column >= k.Column
	}
	return v.Column > k.Column && v.Kind != yamlv3.ScalarNode // a scalar under its key is folded or odd
}

// item checks the i-th item c of block sequence s: "- " right before it,
// in s's column, on a line after the previous item's.
func (f *fastDecoder) item(s *yamlv3.Node, i int, c *yamlv3.Node) bool {
	if c.Line < 1 || c.Line > len(f.lines) || c.Column != s.Column+2 || (i > 0 && c.Line <= s.Content[i-1].Line) {
		return false
	}
	line := f.lines[c.Line-1]
	if len(line) < s.Column+1 || line[s.Column-1:s.Column+1] != "- " {
		return false
	}
	before := " "
	if i == 0 {
		before = " -" // "- - x": a sequence in an item
	}
	return strings.Trim(line[:s.Column-1], before) == ""
}

// onLine reports whether n and all within it stand on line.
func onLine(n *yamlv3.Node, line int) bool {
	if n.Line != line {
		return false
	}
	for _, c := range n.Content {
		if !onLine(c, line) {
			return false
		}
	}
	return true
}

// coreTag reports a tag yaml/v3 resolved itself; "!" and the like are
// read otherwise by goccy.
func coreTag(tag string) bool {
	switch tag {
	case "!!str", "!!int", "!!float", "!!bool", "!!null", "!!map", "!!seq":
		return true
	}
	return false
}

// key is a mapping key that both read as the same string.
func (f *fastDecoder) key(n *yamlv3.Node) (string, bool) {
	if n.Kind != yamlv3.ScalarNode || n.Anchor != "" || n.Style&yamlv3.TaggedStyle != 0 || !coreTag(n.Tag) || n.Value == "<<" {
		return "", false
	}
	v, ok := f.scalar(n)
	s, isString := v.(string)
	return s, ok && isString
}

func (f *fastDecoder) scalar(n *yamlv3.Node) (any, bool) {
	switch n.Style {
	case yamlv3.DoubleQuotedStyle, yamlv3.SingleQuotedStyle:
		q := byte('"')
		if n.Style == yamlv3.SingleQuotedStyle {
			q = '\''
		}
		rest, ok := f.at(n)
		if !ok || len(rest) < 2 || rest[0] != q {
			return nil, false
		}
		end := strings.IndexByte(rest[1:], q)
		if end < 0 {
			return nil, false // closed on a later line
		}
		raw := rest[1 : 1+end]
		// A quote doubled ('') or an escape (\): left to goccy.
		if strings.ContainsRune(raw, '\\') || raw != n.Value || !f.ends(rest[2+end:]) ||
			(q == '\'' && strings.HasPrefix(rest[2+end:], "'")) {
			return nil, false
		}
		return raw, true
	case 0:
	default:
		return nil, false // literal and folded block scalars
	}
	v := n.Value
	if v == "" {
		if n.Tag == "!!null" {
			return nil, true // a key with no value, an empty item
		}
		return nil, false
	}
	rest, ok := f.at(n)
	if !ok || !strings.HasPrefix(rest, v) || !f.ends(rest[len(v):]) {
		return nil, false // a scalar over several lines, folded
	}
	switch c := v[0]; {
	case v == "true" || v == "false":
		return v == "true", n.Tag == "!!bool"
	case v == "null":
		return nil, n.Tag == "!!null"
	case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		if n.Tag != "!!str" || reservedYAML(v) {
			return nil, false
		}
		return v, true
	case c == '-' || c >= '0' && c <= '9':
		return yamlNumber(v)
	case c == '~' && v == "~":
		return nil, true
	}
	return nil, false
}

// at is the rest of the line from n's position.
func (f *fastDecoder) at(n *yamlv3.Node) (string, bool) {
	if n.Line < 1 || n.Line > len(f.lines) || n.Column < 1 {
		return "", false
	}
	line := f.lines[n.Line-1]
	for col := 1; col < n.Column; col++ { // yaml/v3 counts characters
		if line == "" {
			return "", false
		}
		_, size := utf8.DecodeRuneInString(line)
		line = line[size:]
	}
	return line, true
}

// ends reports whether what follows a scalar on its line ends it: nothing,
// a comment, or a flow collection's punctuation.
func (f *fastDecoder) ends(rest string) bool {
	t := strings.TrimLeft(rest, " ")
	switch {
	case t == "":
		return true
	case t[0] == '#':
		return len(t) < len(rest) // a comment needs a space before it
	case t[0] == ',' || t[0] == ']' || t[0] == '}' || t[0] == ':':
		return true
	}
	return false
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
