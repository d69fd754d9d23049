package validators

import (
	"fmt"
	"strings"

	"github.com/BurntSushi/toml"
)

// BurntSushi/toml v1.6.0 lets a document define a table twice in the ways
// TOML 1.0 forbids (toml-test, issue 30): dotted keys that add to a table
// a [header] defined ("[a.b.c]" then, under "[a]", "b.c.t = 1"), a header
// for a table dotted keys defined ("apple.color" then "[fruit.apple]"),
// a key added to an inline table, a dotted key through a value. tomlTables
// walks the keys of a document the library has already parsed and refuses
// each of these, as TOML 1.0 §Table and §Inline Table say: a table is
// defined once, by a header, by dotted keys or inline; a header may name
// a sub-table of one dotted keys defined, nothing else may extend it.

// A tomlTable is a table of the document as its keys define it.
type tomlTable struct {
	how      tomlHow
	children map[string]*tomlTable
	// the last table of an array of tables ([[header]]) stands for it
	last *tomlTable
}

type tomlHow int

const (
	tomlImplicit tomlHow = iota // created as a header's parent, not defined
	tomlHeader                  // defined by [header]
	tomlDotted                  // defined by dotted keys
	tomlInline                  // an inline table: closed
	tomlValue                   // a value, not a table
	tomlArray                   // an array of tables
)

func newTOMLTable(how tomlHow) *tomlTable {
	return &tomlTable{how: how, children: map[string]*tomlTable{}}
}

// tomlScan reads a document's keys; the syntax is already known good.
type tomlScan struct {
	s         string
	i         int
	line      int
	err       *Error
	emptyKeys [][2]int // where a quoted empty key is written: start, end
}

// tomlTables refuses a document that defines a table twice or that TOML
// 1.0 does not allow (tomlNewer); it returns where the document quotes an
// empty key.
func tomlTables(content string) ([][2]int, *Error) {
	p := &tomlScan{s: content, line: 1}
	root := newTOMLTable(tomlHeader)
	cur := root
	for p.err == nil {
		p.skipBlank()
		if p.i >= len(p.s) {
			break
		}
		line := p.line
		if p.s[p.i] == '[' {
			array := strings.HasPrefix(p.s[p.i:], "[[")
			p.i += 1 + b2int(array)
			keys := p.keys()
			if end := strings.IndexByte(p.s[p.i:], ']'); end >= 0 {
				p.i = min(p.i+end+1+b2int(array), len(p.s))
			} else {
				p.i = len(p.s)
			}
			cur = p.header(root, keys, array, line)
			continue
		}
		before := p.i
		p.keyValue(cur, line)
		p.progress(before)
	}
	return p.emptyKeys, p.err
}

func b2int(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (p *tomlScan) fail(line int, format string, args ...any) {
	if p.err == nil {
		p.err = &Error{Line: line, Msg: fmt.Sprintf(format, args...)}
	}
}

// header defines the table [keys] or adds a table to the array [[keys]],
// and returns it.
func (p *tomlScan) header(root *tomlTable, keys []string, array bool, line int) *tomlTable {
	t := root
	for i, k := range keys {
		name := strings.Join(keys[:i+1], ".")
		c := t.children[k]
		if i < len(keys)-1 {
			switch {
			case c == nil:
				c = newTOMLTable(tomlImplicit)
				t.children[k] = c
			case c.how == tomlArray:
				c = c.last
			case c.how == tomlValue || c.how == tomlInline:
				p.fail(line, "the table [%s] goes through %s, which is a value, not a table", strings.Join(keys, "."), name)
				return t
			}
			t = c
			continue
		}
		switch {
		case array && c == nil:
			c = &tomlTable{how: tomlArray}
			t.children[k] = c
		case array && c.how == tomlArray:
		case array:
			p.fail(line, "[[%s]] adds to an array of tables, but %s is already defined as something else", name, name)
			return t
		case c == nil:
			c = newTOMLTable(tomlHeader)
			t.children[k] = c
			return c
		case c.how == tomlImplicit:
			c.how = tomlHeader
			return c
		default:
			p.fail(line, "the table [%s] is defined twice: it is already defined above (a table is defined once, by one header, by dotted keys or inline)", name)
			return t
		}
		c.last = newTOMLTable(tomlHeader)
		return c.last
	}
	return t
}

// keyValue reads keys = value into t.
func (p *tomlScan) keyValue(t *tomlTable, line int) {
	keys := p.keys()
	p.i = min(p.i+1, len(p.s)) // =
	p.spaces()
	for i, k := range keys[:len(keys)-1] {
		c := t.children[k]
		switch {
		case c == nil:
			c = newTOMLTable(tomlDotted)
			t.children[k] = c
		case c.how != tomlDotted:
			p.fail(line, "the dotted key %s adds to the table %s, which is already defined elsewhere: write its keys where it is defined",
				strings.Join(keys, "."), strings.Join(keys[:i+1], "."))
			return
		}
		t = c
	}
	k := keys[len(keys)-1]
	if t.children[k] != nil {
		p.fail(line, "the key %s is defined twice", strings.Join(keys, "."))
		return
	}
	t.children[k] = p.value(line)
}

// value reads a value; an inline table is read into a closed table.
func (p *tomlScan) value(line int) *tomlTable {
	if p.i >= len(p.s) {
		return newTOMLTable(tomlValue)
	}
	switch c := p.s[p.i]; {
	case c == '{':
		p.i++
		t := newTOMLTable(tomlDotted)
		comma := false
		for p.err == nil {
			lineBefore := p.line
			p.skipBlank()
			if p.line != lineBefore {
				p.newer(line, "an inline table spans lines")
				break
			}
			if p.i >= len(p.s) || p.s[p.i] == '}' {
				if comma {
					p.newer(line, "an inline table ends with a comma")
				}
				p.i = min(p.i+1, len(p.s))
				break
			}
			if comma = p.s[p.i] == ','; comma {
				p.i++
				continue
			}
			before := p.i
			p.keyValue(t, p.line)
			p.progress(before)
		}
		closeTOML(t)
		return t
	case c == '[':
		p.i++
		for p.err == nil {
			p.skipBlank()
			if p.i >= len(p.s) || p.s[p.i] == ']' {
				p.i = min(p.i+1, len(p.s))
				break
			}
			if p.s[p.i] == ',' {
				p.i++
				continue
			}
			before := p.i
			p.value(p.line)
			p.progress(before)
		}
	case c == '"' || c == '\'':
		p.str()
	default:
		start := p.i
		for p.i < len(p.s) && strings.IndexByte(",]}#\r\n", p.s[p.i]) < 0 {
			p.i++
		}
		p.dateTime(strings.TrimSpace(p.s[start:p.i]), line)
	}
	return newTOMLTable(tomlValue)
}

// closeTOML marks an inline table and the tables in it closed.
func closeTOML(t *tomlTable) {
	if t.how == tomlValue {
		return
	}
	t.how = tomlInline
	for _, c := range t.children {
		closeTOML(c)
	}
}

// keys reads a dotted key, each part unquoted.
func (p *tomlScan) keys() []string {
	var keys []string
	for {
		p.spaces()
		if p.i < len(p.s) && (p.s[p.i] == '"' || p.s[p.i] == '\'') {
			basic, start := p.s[p.i] == '"', p.i
			k := p.str()
			if k == "" {
				p.emptyKeys = append(p.emptyKeys, [2]int{start, p.i})
			}
			if basic && strings.Contains(k, "\\") {
				k = unquoteTOML(k)
			}
			keys = append(keys, k)
		} else {
			start := p.i
			for p.i < len(p.s) && strings.IndexByte(" \t.=]", p.s[p.i]) < 0 {
				p.i++
			}
			keys = append(keys, p.s[start:p.i])
		}
		p.spaces()
		if p.i >= len(p.s) || p.s[p.i] != '.' {
			return keys
		}
		p.i++
	}
}

// unquoteTOML decodes the escapes of a basic string's text.
func unquoteTOML(raw string) string {
	var v struct{ K string }
	if _, err := toml.Decode("K = \""+raw+"\"", &v); err != nil {
		return raw
	}
	return v.K
}

// str reads a string of any of TOML's four kinds and returns its text as
// written.
func (p *tomlScan) str() string {
	q := p.s[p.i : p.i+1]
	if strings.HasPrefix(p.s[p.i:], q+q+q) {
		q += q + q
	}
	p.i += len(q)
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '\\' && q[0] == '"':
			if p.i+1 < len(p.s) && (p.s[p.i+1] == 'x' || p.s[p.i+1] == 'e') {
				p.newer(p.line, "the escape \\"+p.s[p.i+1:p.i+2]+" is not in TOML 1.0 (write \\u00XX)")
			}
			if p.i+1 < len(p.s) && p.s[p.i+1] == '\n' {
				p.line++ // a line-ending backslash
			}
			b.WriteString(p.s[p.i:min(p.i+2, len(p.s))])
			p.i = min(p.i+2, len(p.s))
			continue
		case strings.HasPrefix(p.s[p.i:], q):
			p.i += len(q)
			for len(q) == 3 && p.i < len(p.s) && p.s[p.i] == q[0] { // """a"""" ends with a quote
				b.WriteByte(q[0])
				p.i++
			}
			return b.String()
		case c == '\n':
			p.line++
		}
		b.WriteByte(c)
		p.i++
	}
	return b.String()
}

// skipBlank skips spaces, line breaks and comments.
func (p *tomlScan) skipBlank() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case '\n':
			p.line++
			p.i++
		case ' ', '\t', '\r':
			p.i++
		case '#':
			for p.i < len(p.s) && p.s[p.i] != '\n' {
				p.i++
			}
		default:
			return
		}
	}
}

// progress moves on when a step read nothing: the scan runs on documents
// the library has parsed, but must end on any text.
func (p *tomlScan) progress(before int) {
	if p.i <= before {
		p.i = before + 1
	}
}

func (p *tomlScan) spaces() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

// newer refuses syntax TOML 1.1 added: BurntSushi/toml v1.6.0 reads TOML
// 1.1, but an answer labelled toml is TOML 1.0, the version every reader
// takes (README's format table).
func (p *tomlScan) newer(line int, what string) {
	p.fail(line, "%s, which only TOML 1.1 allows: write TOML 1.0", what)
}

// dateTime checks a date or time value: seconds are written (TOML 1.1
// may leave them out), and an offset's hours and minutes are in range.
func (p *tomlScan) dateTime(v string, line int) {
	colon := strings.IndexByte(v, ':')
	if colon < 2 || !isDigits(v[colon-2:colon]) {
		return
	}
	if colon+3 > len(v) || !isDigits(v[colon+1:colon+3]) {
		return
	}
	if colon+3 == len(v) || v[colon+3] != ':' {
		p.newer(line, "the time "+quote(v)+" has no seconds")
		return
	}
	if off := strings.LastIndexAny(v, "+-"); off > colon && len(v) == off+6 && v[off+3] == ':' {
		if v[off+1:off+3] > "23" || v[off+4:] > "59" {
			p.fail(line, "the offset of %s is out of range: hours 00-23, minutes 00-59", quote(v))
		}
	}
}

func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}
