package validators

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// coda's own reading of XML 1.0 (Fifth Edition) well-formedness (issue 30).
// encoding/xml is lenient where an answer's check must not be (attributes
// run together, anything in a DOCTYPE, a "--" in a comment, names and
// characters XML forbids) and refuses what XML allows (an entity the
// document declares). So the check is this scanner: the productions of
// the XML 1.0 grammar, the internal DTD subset parsed and its
// declarations checked, and the well-formedness constraints a processor
// that reads no external entity can check. Internal entities expand, each
// reference once per use, within maxXMLExpansion bytes and
// maxXMLEntityDepth levels in all, so a billion-laughs document is
// refused, not expanded; external entities are never read. The scanner
// walks the text once, with no recursion on the element tree, so its time
// and memory are linear in the answer plus the bounded expansions.

// maxXMLExpansion bounds the replacement text a document's entity
// references read, in bytes, counted at each use; maxXMLEntityDepth bounds
// references within replacement text. A real answer's entities stand for
// a word or a phrase.
const (
	maxXMLExpansion   = 1 << 20
	maxXMLEntityDepth = 16
)

// An xmlEntity is an entity the internal subset declares.
type xmlEntity struct {
	name     string
	value    string // replacement text of an internal entity
	external bool   // a SYSTEM or PUBLIC entity, never read
	unparsed bool   // external with NDATA
	active   bool   // being expanded: a reference to it now recurses
}

// An xmlWF scans one document.
type xmlWF struct {
	doc        string // the whole answer, for positions
	general    map[string]*xmlEntity
	params     map[string]*xmlEntity
	declared   bool // WFC Entity Declared applies: every reference must be declared
	skipDecl   bool // an unread parameter entity came first: later declarations are not processed
	standalone bool // standalone="yes"
	read       int  // replacement text read, in bytes
	refs       []xmlRef
	open       []openTag // the document's open elements, for a cut-off answer
	err        *Error
}

// xmlRef is an entity reference being expanded: where in the document it
// is, and which entity.
type xmlRef struct {
	off  int
	name string
}

// xmlCur is a cursor over the document or over an entity's replacement
// text; base is its text's offset in the document, or -1 inside an
// entity.
type xmlCur struct {
	s    string
	i    int
	base int
}

func (c *xmlCur) eof() bool         { return c.i >= len(c.s) }
func (c *xmlCur) has(p string) bool { return strings.HasPrefix(c.s[c.i:], p) }
func (c *xmlCur) peek() byte        { return c.s[c.i] }
func (c *xmlCur) space() bool       { j := c.i; c.i += spaceLen(c.s[c.i:]); return c.i > j }
func isXMLSpace(b byte) bool        { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }
func (c *xmlCur) rest() string      { return c.s[c.i:] }
func (c *xmlCur) at(off int) xmlCur { return xmlCur{c.s, off, c.base} }

// take moves past p when the text goes on with it.
func (c *xmlCur) take(p string) bool {
	if !c.has(p) {
		return false
	}
	c.i += len(p)
	return true
}
func (c *xmlCur) docOff(off int) int  { return c.base + off }
func (c *xmlCur) inEntity() bool      { return c.base < 0 }
func (c *xmlCur) next() (rune, int)   { return utf8.DecodeRuneInString(c.s[c.i:]) }
func (c *xmlCur) until(p string) int  { return strings.Index(c.s[c.i:], p) }
func (c *xmlCur) sub(s string) xmlCur { return xmlCur{s, 0, -1} }

func spaceLen(s string) int {
	n := 0
	for n < len(s) && isXMLSpace(s[n]) {
		n++
	}
	return n
}

// fail records the first error, at offset off of c's text: in the
// document, or at the outermost reference being expanded.
func (p *xmlWF) fail(c *xmlCur, off int, format string, args ...any) {
	if p.err != nil {
		return
	}
	msg := fmt.Sprintf(format, args...)
	pos := c.docOff(off)
	if c.inEntity() && len(p.refs) > 0 {
		pos = p.refs[0].off
		msg = fmt.Sprintf("in the text of the entity &%s; %s", p.refs[len(p.refs)-1].name, msg)
	}
	p.err = errorAt(p.doc, pos, "%s", msg)
}

// eofFail is the error of a document that ends too soon.
func (p *xmlWF) eofFail(open []openTag) {
	if p.err != nil {
		return
	}
	if open == nil {
		open = p.open
	}
	end := len(strings.TrimRightFunc(p.doc, isSpace))
	if len(open) > 0 {
		o := open[len(open)-1]
		line, col := position(p.doc, o.off)
		p.err = errorAt(p.doc, end, "the XML ends while <%s> (line %d, column %d) is still open: was the answer cut off? Close every open element", o.name, line, col)
		return
	}
	p.err = errorAt(p.doc, end, "the XML ends in the middle of markup: was the answer cut off?")
}

// xmlWellFormed checks content as an XML 1.0 document and returns the
// internal entities it declares whose replacement text is plain text.
func xmlWellFormed(content string) (map[string]string, *Error) {
	p := &xmlWF{doc: content, general: map[string]*xmlEntity{}, params: map[string]*xmlEntity{}, declared: true}
	if off, msg := illegalChar(content); msg != "" {
		return nil, errorAt(content, off, "%s", msg)
	}
	c := &xmlCur{s: content, base: 0}
	c.take("\ufeff")
	p.document(c)
	if p.err != nil {
		return nil, p.err
	}
	text := map[string]string{}
	for name, e := range p.general {
		if !e.external && !strings.ContainsAny(e.value, "<&") {
			text[name] = e.value
		}
	}
	return text, nil
}

// illegalChar finds the first byte that is not UTF-8 or a character XML
// forbids.
func illegalChar(s string) (int, string) {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			return i, "the text is not valid UTF-8 here"
		}
		if !isXMLChar(r) {
			return i, fmt.Sprintf("the character %U is not allowed in XML", r)
		}
		i += n
	}
	return 0, ""
}

func isXMLChar(r rune) bool {
	return r == 0x9 || r == 0xA || r == 0xD || r >= 0x20 && r <= 0xD7FF || r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= 0x10FFFF
}

func isNameStart(r rune) bool {
	switch {
	case r == ':' || r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z':
		return true
	case r < 0xC0:
		return false
	}
	return r <= 0xD6 || r >= 0xD8 && r <= 0xF6 || r >= 0xF8 && r <= 0x2FF || r >= 0x370 && r <= 0x37D ||
		r >= 0x37F && r <= 0x1FFF || r >= 0x200C && r <= 0x200D || r >= 0x2070 && r <= 0x218F ||
		r >= 0x2C00 && r <= 0x2FEF || r >= 0x3001 && r <= 0xD7FF || r >= 0xF900 && r <= 0xFDCF ||
		r >= 0xFDF0 && r <= 0xFFFD || r >= 0x10000 && r <= 0xEFFFF
}

func isNameChar(r rune) bool {
	return isNameStart(r) || r == '-' || r == '.' || r >= '0' && r <= '9' || r == 0xB7 ||
		r >= 0x300 && r <= 0x36F || r >= 0x203F && r <= 0x2040
}

// name reads a Name, or returns "" with c unmoved.
func (c *xmlCur) name() string {
	start := c.i
	for first := true; !c.eof(); first = false {
		r, n := c.next()
		if first && !isNameStart(r) || !first && !isNameChar(r) {
			break
		}
		c.i += n
	}
	return c.s[start:c.i]
}

// nmtoken reads an Nmtoken, or returns "".
func (c *xmlCur) nmtoken() string {
	start := c.i
	for !c.eof() {
		r, n := c.next()
		if !isNameChar(r) {
			break
		}
		c.i += n
	}
	return c.s[start:c.i]
}

// document: prolog element Misc*.
func (p *xmlWF) document(c *xmlCur) {
	if c.has("<?xml") && len(c.s) > c.i+5 && (isXMLSpace(c.s[c.i+5]) || c.s[c.i+5] == '?') {
		p.xmlDecl(c)
	}
	doctype, roots := false, 0
	for p.err == nil {
		c.space()
		if c.eof() {
			break
		}
		start := c.i
		switch {
		case c.has("<!--"):
			p.comment(c)
		case c.has("<?"):
			p.pi(c)
		case c.has("<!DOCTYPE"):
			if doctype || roots > 0 {
				p.fail(c, start, "a DOCTYPE declaration may only come once, before the root element")
				return
			}
			doctype = true
			p.doctype(c)
		case c.has("<") && !c.has("</") && !c.has("<!"):
			if roots > 0 {
				nc := c.at(c.i + 1)
				p.fail(c, start, "a second root element <%s> starts here: an XML document has exactly one root element, so wrap the elements in one", nc.name())
				return
			}
			roots++
			p.content(c, nil)
		default:
			t := c.rest()
			if end := strings.IndexByte(t, '<'); end > 0 {
				t = t[:end]
			}
			if s := strings.TrimSpace(t); s != "" && !strings.HasPrefix(s, "<") {
				if roots == 0 {
					p.fail(c, start, "there is text before the root element (%s): the answer must be the XML document alone", quote(firstLine(s)))
				} else {
					p.fail(c, start, "there is text after the root element (%s): the answer must be the XML document alone, with nothing after it", quote(firstLine(s)))
				}
				return
			}
			p.fail(c, start, "%s is not allowed here: outside the root element only comments and processing instructions may stand", quote(firstLine(c.rest())))
			return
		}
	}
	if p.err == nil && roots == 0 {
		p.err = &Error{Msg: "the answer has no root element: submit the XML document, such as <result>...</result>"}
	}
}

// xmlDecl: '<?xml' VersionInfo EncodingDecl? SDDecl? S? '?>'.
func (p *xmlWF) xmlDecl(c *xmlCur) {
	start := c.i
	c.take("<?xml")
	bad := func() {
		p.fail(c, start, "the XML declaration is malformed: write it as <?xml version=\"1.0\" encoding=\"UTF-8\"?>")
	}
	attr := func(name string) (string, bool) {
		save := c.i
		if !c.space() || !c.take(name) {
			c.i = save
			return "", false
		}
		c.space()
		if !c.take("=") {
			bad()
			return "", false
		}
		c.space()
		v, ok := p.quoted(c)
		if !ok {
			bad()
		}
		return v, ok
	}
	v, ok := attr("version")
	if !ok || len(v) < 3 || !strings.HasPrefix(v, "1.") || strings.Trim(v[2:], "0123456789") != "" {
		bad()
		return
	}
	if enc, ok := attr("encoding"); ok {
		if enc == "" || !isASCIILetter(enc[0]) || strings.Trim(enc, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != "" {
			bad()
			return
		}
	} else if p.err != nil {
		return
	}
	if sd, ok := attr("standalone"); ok {
		if sd != "yes" && sd != "no" {
			bad()
			return
		}
		p.standalone = sd == "yes"
	} else if p.err != nil {
		return
	}
	c.space()
	if !c.take("?>") {
		bad()
	}
}

func isASCIILetter(b byte) bool { return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' }

// quoted reads a literal in ' or " with nothing checked inside.
func (p *xmlWF) quoted(c *xmlCur) (string, bool) {
	if c.eof() || c.peek() != '"' && c.peek() != '\'' {
		return "", false
	}
	q := c.s[c.i : c.i+1]
	c.i++
	end := c.until(q)
	if end < 0 {
		c.i = len(c.s)
		return "", false
	}
	v := c.s[c.i : c.i+end]
	c.i += end + 1
	return v, true
}

// comment: '<!--' ((Char - '-') | ('-' (Char - '-')))* '-->'.
func (p *xmlWF) comment(c *xmlCur) {
	start := c.i
	c.take("<!--")
	end := c.until("--")
	if end < 0 {
		p.unclosed(c, start, "the comment opened here is never closed with -->")
		return
	}
	c.i += end
	if !c.take("-->") {
		p.fail(c, c.i, "\"--\" is not allowed inside a comment: end the comment with --> or rewrite the dashes")
	}
}

// unclosed fails with msg, or as a cut-off answer when c is the document.
func (p *xmlWF) unclosed(c *xmlCur, start int, msg string) {
	c.i = len(c.s)
	p.fail(c, start, "%s (was the answer cut off?)", msg)
}

// pi: '<?' PITarget (S (Char* - (Char* '?>' Char*)))? '?>', the target
// not "xml" in any case.
func (p *xmlWF) pi(c *xmlCur) {
	start := c.i
	c.take("<?")
	target := c.name()
	switch {
	case target == "":
		p.fail(c, start, "a processing instruction needs a target name right after <?")
		return
	case strings.EqualFold(target, "xml") && !c.inEntity() && strings.TrimLeft(c.s[:start], " \t\r\n\ufeff") == "":
		p.fail(c, start, "nothing may come before the XML declaration <?xml ...?>, not even a blank line or a space: start the answer with it")
		return
	case strings.EqualFold(target, "xml"):
		p.fail(c, start, "<?xml ...?> is the XML declaration and may only stand at the very start of the document")
		return
	}
	if c.take("?>") {
		return
	}
	if !c.space() {
		p.fail(c, c.i, "the processing instruction's target must be followed by a space or ?>")
		return
	}
	end := c.until("?>")
	if end < 0 {
		p.unclosed(c, start, "the processing instruction opened here is never closed with ?>")
		return
	}
	c.i += end + 2
}

// content reads elements, text and references until the elements open at
// the start (the root, in a document) close, or, in an entity's
// replacement text, to its end with every element it opens closed.
func (p *xmlWF) content(c *xmlCur, open []openTag) {
	for p.err == nil {
		if !c.inEntity() {
			p.open = open
		}
		if c.eof() {
			if c.inEntity() {
				if len(open) > 0 {
					p.fail(c, 0, "opens <%s> without closing it: an entity's elements must close inside it", open[len(open)-1].name)
				}
				return
			}
			p.eofFail(open)
			return
		}
		start := c.i
		switch {
		case c.has("</"):
			c.i += 2
			name := c.name()
			c.space()
			if name == "" || !c.take(">") {
				if c.eof() {
					p.eofFail(open)
				} else {
					p.fail(c, start, "the end tag is malformed: write </name>")
				}
				return
			}
			if len(open) == 0 {
				p.fail(c, start, "</%s> closes an element opened outside this entity", name)
				return
			}
			if top := open[len(open)-1]; top.name != name {
				line, col := position(p.doc, top.off)
				p.fail(c, start, "element <%s> closed by </%s>: <%s> opened on line %d, column %d must close first", top.name, name, top.name, line, col)
				return
			}
			open = open[:len(open)-1]
			if len(open) == 0 && !c.inEntity() {
				return
			}
		case c.has("<!--"):
			p.comment(c)
		case c.has("<![CDATA["):
			c.i += len("<![CDATA[")
			end := c.until("]]>")
			if end < 0 {
				p.unclosed(c, start, "the CDATA section opened here is never closed with ]]>")
				return
			}
			c.i += end + 3
		case c.has("<?"):
			p.pi(c)
		case c.has("<!"):
			p.fail(c, start, "%s is not allowed inside an element: only elements, text, comments, CDATA sections and processing instructions are", quote(firstLine(c.rest()[:min(len(c.rest()), 12)])))
			return
		case c.has("<"):
			name, empty := p.startTag(c)
			if p.err != nil || empty {
				if p.err == nil && len(open) == 0 && !c.inEntity() {
					return // an empty root
				}
				continue
			}
			open = append(open, openTag{name, c.docOff(start)})
			if c.inEntity() {
				open[len(open)-1].off = p.refs[0].off
			}
		case c.has("&"):
			p.reference(c, false)
		default:
			p.charData(c)
		}
	}
}

// charData reads text up to the next markup; "]]>" is not allowed in it.
func (p *xmlWF) charData(c *xmlCur) {
	end := strings.IndexAny(c.rest(), "<&")
	if end < 0 {
		end = len(c.rest())
	}
	if i := strings.Index(c.rest()[:end], "]]>"); i >= 0 {
		p.fail(c, c.i+i, "\"]]>\" is not allowed in text: write ]]&gt;")
		return
	}
	c.i += end
}

// startTag reads '<' Name (S Attribute)* S? ('>' | '/>').
func (p *xmlWF) startTag(c *xmlCur) (name string, empty bool) {
	start := c.i
	c.i++
	name = c.name()
	if name == "" {
		if c.eof() {
			p.eofFail(nil)
			return "", false
		}
		p.fail(c, start, "\"<\" must start a tag here: an element name starts with a letter, \"_\" or \":\" (write a literal < as &lt;)")
		return "", false
	}
	var attrs attrSet
	for p.err == nil {
		sp := c.space()
		switch {
		case c.take("/>"):
			return name, true
		case c.take(">"):
			return name, false
		case c.eof():
			c.i = len(c.s)
			p.eofFail(nil)
			return "", false
		}
		at := c.i
		attr := c.name()
		if attr == "" {
			p.fail(c, at, "element <%s> has %s where an attribute or the end of the tag should be", name, quote(firstLine(c.rest()[:min(len(c.rest()), 12)])))
			return "", false
		}
		if !sp {
			p.fail(c, at, "the attribute %q of <%s> must be separated from what comes before it by a space", attr, name)
			return "", false
		}
		if attrs.add(attr) {
			p.fail(c, start, "element <%s> has the attribute %q twice: keep one", name, attr)
			return "", false
		}
		c.space()
		if !c.take("=") {
			p.fail(c, at, "the attribute %q of <%s> needs a value: write %s=\"...\"", attr, name, attr)
			return "", false
		}
		c.space()
		p.attValue(c, name, attr)
	}
	return "", false
}

// attValue reads a quoted attribute value: no "<" in it, nor in the text
// of an entity it refers to, and every reference well-formed.
func (p *xmlWF) attValue(c *xmlCur, elem, attr string) {
	if c.eof() || c.peek() != '"' && c.peek() != '\'' {
		if c.eof() {
			p.eofFail(nil)
			return
		}
		p.fail(c, c.i, "the value of the attribute %q of <%s> must be in quotes", attr, elem)
		return
	}
	q := c.peek()
	c.i++
	end := strings.IndexByte(c.rest(), q)
	if end < 0 {
		p.unclosed(c, c.i-1, fmt.Sprintf("the value of the attribute %q of <%s> is never closed", attr, elem))
		return
	}
	v := xmlCur{c.s[:c.i+end], c.i, c.base}
	p.attText(&v)
	c.i += end + 1
}

// attText checks the text of an attribute value (or an entity's
// replacement text met in one) from c's position to its end.
func (p *xmlWF) attText(c *xmlCur) {
	for p.err == nil && !c.eof() {
		switch c.peek() {
		case '<':
			p.fail(c, c.i, "\"<\" is not allowed in an attribute value: write &lt;")
			return
		case '&':
			p.reference(c, true)
		default:
			c.i++
		}
	}
}

// refForm reads a reference's form: a character reference's character
// (name ""), or an entity reference's name.
func (p *xmlWF) refForm(c *xmlCur) (name string, r rune, ok bool) {
	start := c.i
	c.i++
	if c.take("#") {
		hex := c.take("x")
		digits := "0123456789"
		if hex {
			digits += "abcdefABCDEF"
		}
		d := c.i
		for !c.eof() && strings.IndexByte(digits, c.peek()) >= 0 {
			c.i++
		}
		if c.i == d || !c.take(";") {
			p.fail(c, start, "a character reference is &#DIGITS; or &#xHEX; (write a literal & as &amp;)")
			return "", 0, false
		}
		r, legal := charRef(c.s[d:c.i-1], hex)
		if !legal {
			p.fail(c, start, "%s refers to a character XML does not allow", c.s[start:c.i])
			return "", 0, false
		}
		return "", r, true
	}
	name = c.name()
	if name == "" || !c.take(";") {
		p.fail(c, start, "a bare \"&\" is not allowed: write a literal & as &amp; (a reference is &name;)")
		return "", 0, false
	}
	return name, 0, true
}

// reference reads a character or entity reference and expands an entity:
// in an attribute value when inAttr, else as content.
func (p *xmlWF) reference(c *xmlCur, inAttr bool) {
	start := c.i
	name, _, ok := p.refForm(c)
	if !ok || name == "" {
		return
	}
	switch name {
	case "amp", "lt", "gt", "quot", "apos":
		return
	}
	e := p.general[name]
	switch {
	case e == nil:
		if p.declared {
			p.fail(c, start, "the entity &%s; is not declared: XML knows only &amp; &lt; &gt; &quot; &apos; and those a DOCTYPE declares (write a literal & as &amp;)", name)
		}
		return
	case e.unparsed:
		p.fail(c, start, "&%s; names an unparsed (NDATA) entity, which may only be named in an ENTITY attribute", name)
		return
	case e.external && inAttr:
		p.fail(c, start, "&%s; is an external entity, which an attribute value may not refer to", name)
		return
	case e.external:
		return // never fetched
	case e.active:
		p.fail(c, start, "the entity &%s; refers to itself", name)
		return
	}
	if len(p.refs) >= maxXMLEntityDepth {
		p.fail(c, start, "entity references nest more than %d deep here: write the text out", maxXMLEntityDepth)
		return
	}
	p.read += len(e.value)
	if p.read > maxXMLExpansion {
		p.fail(c, start, "the entities of this document expand to more than %d bytes (at &%s; here): an answer's entities stand for short texts; write the text out", maxXMLExpansion, name)
		return
	}
	if !c.inEntity() {
		p.refs = p.refs[:0]
	}
	p.refs = append(p.refs, xmlRef{c.docOff(start), name})
	e.active = true
	sub := c.sub(e.value)
	if inAttr {
		p.attText(&sub)
	} else {
		p.content(&sub, nil)
	}
	e.active = false
	p.refs = p.refs[:len(p.refs)-1]
}

// charRef decodes the digits of a character reference and reports
// whether XML allows the character.
func charRef(digits string, hex bool) (rune, bool) {
	base := int64(10)
	if hex {
		base = 16
	}
	var r int64
	for _, d := range digits {
		var v int64
		switch {
		case d >= '0' && d <= '9':
			v = int64(d - '0')
		case d >= 'a' && d <= 'f':
			v = int64(d-'a') + 10
		default:
			v = int64(d-'A') + 10
		}
		r = r*base + v
		if r > 0x10FFFF {
			return 0, false
		}
	}
	return rune(r), isXMLChar(rune(r))
}

// attrSet is an element's attribute names: a list while short, a map past
// 16, so that a tag of thousands of attributes is checked in linear time.
type attrSet struct {
	list []string
	set  map[string]bool
}

// add adds name and reports whether it was there already.
func (a *attrSet) add(name string) bool {
	if a.set != nil {
		if a.set[name] {
			return true
		}
		a.set[name] = true
		return false
	}
	for _, n := range a.list {
		if n == name {
			return true
		}
	}
	a.list = append(a.list, name)
	if len(a.list) > 16 {
		a.set = make(map[string]bool, 2*len(a.list))
		for _, n := range a.list {
			a.set[n] = true
		}
	}
	return false
}
