package validators

import (
	"strings"
	"unicode/utf8"
)

// The DOCTYPE declaration and its internal subset, for xmlWF: every
// markup declaration's grammar, the entities declared (the first
// declaration of a name binds), and the well-formedness constraints on
// parameter entities. Nothing external is read: a document that names an
// external subset, or refers to a parameter entity, may use entities it
// does not declare here (XML 1.0 §4.1, WFC Entity Declared), and after a
// parameter entity that is not read, later declarations are not processed
// unless the document is standalone (§5.1).

// maxDTDGroups bounds the nesting of an element declaration's groups.
const maxDTDGroups = 64

// doctype: '<!DOCTYPE' S Name (S ExternalID)? S? ('[' intSubset ']' S?)? '>'.
func (p *xmlWF) doctype(c *xmlCur) {
	start := c.i
	c.take("<!DOCTYPE")
	bad := func(what string) {
		if c.eof() {
			p.unclosed(c, start, "the DOCTYPE declaration opened here is never closed")
			return
		}
		p.fail(c, c.i, "the DOCTYPE declaration is malformed: %s", what)
	}
	if !c.space() || c.name() == "" {
		bad("<!DOCTYPE is followed by a space and the root element's name")
		return
	}
	if sp := c.space(); sp && (c.has("SYSTEM") || c.has("PUBLIC")) {
		if !p.externalID(c, false) {
			return
		}
		p.declared = p.standalone
		c.space()
	}
	if c.take("[") {
		p.markupDecls(c, false)
		if p.err != nil {
			return
		}
		c.space()
	}
	if !c.take(">") {
		bad("expected \">\" here")
	}
}

// externalID reads SYSTEM SystemLiteral or PUBLIC PubidLiteral
// SystemLiteral; a notation (publicOnly) may leave out the system literal.
func (p *xmlWF) externalID(c *xmlCur, publicOnly bool) bool {
	at := c.i
	public := c.take("PUBLIC")
	if !public && !c.take("SYSTEM") {
		p.fail(c, at, "expected SYSTEM or PUBLIC here")
		return false
	}
	if !c.space() {
		p.fail(c, c.i, "SYSTEM or PUBLIC is followed by a space and a quoted literal")
		return false
	}
	if public {
		lit := c.i
		id, ok := p.quoted(c)
		if !ok {
			p.fail(c, lit, "PUBLIC is followed by a quoted public identifier")
			return false
		}
		if i := strings.IndexFunc(id, func(r rune) bool { return !isPubidChar(r) }); i >= 0 {
			p.fail(c, lit+1+i, "a public identifier may not hold %s", quote(string([]rune(id[i:])[0])))
			return false
		}
		save := c.i
		if !c.space() || c.eof() || c.peek() != '"' && c.peek() != '\'' {
			c.i = save
			if publicOnly {
				return true
			}
			p.fail(c, c.i, "the public identifier is followed by a space and a quoted system literal")
			return false
		}
	}
	lit := c.i
	if _, ok := p.quoted(c); !ok {
		p.fail(c, lit, "expected a quoted system literal here")
		return false
	}
	return true
}

func isPubidChar(r rune) bool {
	return r == ' ' || r == '\r' || r == '\n' || r < 0x80 && (isASCIILetter(byte(r)) || r >= '0' && r <= '9' || strings.ContainsRune("-'()+,./:=?;!*#@$_%", r))
}

// markupDecls reads (markupdecl | PEReference | S)*: up to "]" in the
// internal subset, or to the end of a parameter entity's text (inPE).
func (p *xmlWF) markupDecls(c *xmlCur, inPE bool) {
	for p.err == nil {
		c.space()
		if c.eof() {
			if !inPE {
				p.unclosed(c, c.i, "the DOCTYPE's internal subset is never closed with ]")
			}
			return
		}
		start := c.i
		switch {
		case !inPE && c.take("]"):
			return
		case c.has("%"):
			p.peReference(c)
		case c.has("<!--"):
			p.comment(c)
		case c.has("<?"):
			p.pi(c)
		case c.has("<!ELEMENT"):
			p.elementDecl(c)
		case c.has("<!ATTLIST"):
			p.attlistDecl(c)
		case c.has("<!ENTITY"):
			p.entityDecl(c)
		case c.has("<!NOTATION"):
			p.notationDecl(c)
		default:
			p.fail(c, start, "%s is not a markup declaration: the internal subset holds <!ELEMENT, <!ATTLIST, <!ENTITY, <!NOTATION, comments and processing instructions", quote(firstLine(c.rest()[:min(len(c.rest()), 12)])))
		}
	}
}

// peReference reads %name; between declarations and reads the entity's
// text as declarations.
func (p *xmlWF) peReference(c *xmlCur) {
	start := c.i
	c.i++
	name := c.name()
	if name == "" || !c.take(";") {
		p.fail(c, start, "\"%%\" must start a parameter-entity reference, %%name;")
		return
	}
	e := p.params[name]
	wasDeclared := p.declared
	p.declared = p.standalone // §4.1: a parameter-entity reference relaxes WFC Entity Declared
	switch {
	case e == nil:
		if wasDeclared {
			p.fail(c, start, "the parameter entity %%%s; is not declared before it is used", name)
		}
		p.skipDecl = !p.standalone
		return
	case e.external:
		p.skipDecl = !p.standalone // never read
		return
	case e.active:
		p.fail(c, start, "the parameter entity %%%s; refers to itself", name)
		return
	}
	if len(p.refs) >= maxXMLEntityDepth {
		p.fail(c, start, "entity references nest more than %d deep here", maxXMLEntityDepth)
		return
	}
	p.read += len(e.value)
	if p.read > maxXMLExpansion {
		p.fail(c, start, "the entities of this document expand to more than %d bytes (at %%%s; here)", maxXMLExpansion, name)
		return
	}
	if !c.inEntity() {
		p.refs = p.refs[:0]
	}
	p.refs = append(p.refs, xmlRef{c.docOff(start), name})
	e.active = true
	sub := c.sub(e.value)
	p.markupDecls(&sub, true)
	e.active = false
	p.refs = p.refs[:len(p.refs)-1]
}

// declEnd reads S? '>' closing a declaration.
func (p *xmlWF) declEnd(c *xmlCur, start int, what string) {
	c.space()
	if c.take(">") {
		return
	}
	if c.eof() {
		p.unclosed(c, start, "the "+what+" declaration opened here is never closed with >")
		return
	}
	if c.peek() == '%' {
		p.fail(c, c.i, "a parameter-entity reference may not stand inside a declaration of the internal subset")
		return
	}
	p.fail(c, c.i, "the %s declaration is malformed at %s", what, quote(firstLine(c.rest()[:min(len(c.rest()), 12)])))
}

// declName reads S Name after a declaration's keyword.
func (p *xmlWF) declName(c *xmlCur, what string) bool {
	if !c.space() || c.name() == "" {
		p.fail(c, c.i, "the %s declaration needs a space and a name here", what)
		return false
	}
	return true
}

// elementDecl: '<!ELEMENT' S Name S contentspec S? '>'.
func (p *xmlWF) elementDecl(c *xmlCur) {
	start := c.i
	c.take("<!ELEMENT")
	if !p.declName(c, "<!ELEMENT") {
		return
	}
	if !c.space() {
		p.fail(c, c.i, "the element's name is followed by a space and its content (EMPTY, ANY or a group)")
		return
	}
	switch {
	case c.take("EMPTY"), c.take("ANY"):
	case c.has("("):
		save := c.i
		c.i++
		c.space()
		if c.take("#PCDATA") {
			p.mixed(c)
		} else {
			c.i = save
			p.group(c, 0)
		}
		if p.err != nil {
			return
		}
	default:
		p.fail(c, c.i, "an element's content is EMPTY, ANY or a group in parentheses")
		return
	}
	p.declEnd(c, start, "<!ELEMENT")
}

// mixed reads the rest of '(' S? '#PCDATA' (S? '|' S? Name)* S? ')*',
// or '(#PCDATA)'.
func (p *xmlWF) mixed(c *xmlCur) {
	names := 0
	for {
		c.space()
		if c.take(")") {
			if !c.take("*") && names > 0 {
				p.fail(c, c.i, "mixed content with element names ends with \")*\"")
			}
			return
		}
		if !c.take("|") {
			p.fail(c, c.i, "mixed content lists names after #PCDATA with \"|\"")
			return
		}
		c.space()
		if c.name() == "" {
			p.fail(c, c.i, "expected an element name after \"|\"")
			return
		}
		names++
	}
}

// group reads a choice or sequence: '(' S? cp ((S? '|' S? cp)+ | (S? ','
// S? cp)*) S? ')' and its occurrence mark.
func (p *xmlWF) group(c *xmlCur, depth int) {
	if depth > maxDTDGroups {
		p.fail(c, c.i, "the content model nests more than %d groups", maxDTDGroups)
		return
	}
	c.take("(")
	var sep byte
	for p.err == nil {
		c.space()
		if c.has("(") {
			p.group(c, depth+1)
		} else if c.name() == "" {
			p.fail(c, c.i, "expected an element name or a group here")
			return
		} else {
			occurrence(c)
		}
		c.space()
		switch {
		case c.take(")"):
			occurrence(c)
			return
		case c.eof():
			p.fail(c, c.i, "the content model is never closed with \")\"")
			return
		case (c.peek() == '|' || c.peek() == ',') && (sep == 0 || sep == c.peek()):
			sep = c.peek()
			c.i++
		default:
			p.fail(c, c.i, "a group separates its items all with \"|\" or all with \",\"")
			return
		}
	}
}

func occurrence(c *xmlCur) {
	if !c.eof() && strings.IndexByte("?*+", c.peek()) >= 0 {
		c.i++
	}
}

// attlistDecl: '<!ATTLIST' S Name (S Name S AttType S DefaultDecl)* S? '>'.
func (p *xmlWF) attlistDecl(c *xmlCur) {
	start := c.i
	c.take("<!ATTLIST")
	if !p.declName(c, "<!ATTLIST") {
		return
	}
	for p.err == nil {
		sp := c.space()
		if c.has(">") || c.eof() || !sp {
			p.declEnd(c, start, "<!ATTLIST")
			return
		}
		attr := c.name()
		if attr == "" || !c.space() {
			p.fail(c, c.i, "an attribute definition is a name, a space, a type, a space and a default")
			return
		}
		if !p.attType(c) {
			return
		}
		if !c.space() {
			p.fail(c, c.i, "the attribute type is followed by a space and #REQUIRED, #IMPLIED or a default value")
			return
		}
		switch {
		case c.take("#REQUIRED"), c.take("#IMPLIED"):
		default:
			if c.take("#FIXED") && !c.space() {
				p.fail(c, c.i, "#FIXED is followed by a space and the value")
				return
			}
			p.attValue(c, "!ATTLIST", attr)
		}
	}
}

// attType reads CDATA, a tokenized type, NOTATION (...) or an
// enumeration.
func (p *xmlWF) attType(c *xmlCur) bool {
	for _, t := range []string{"CDATA", "IDREFS", "IDREF", "ID", "ENTITIES", "ENTITY", "NMTOKENS", "NMTOKEN"} {
		if c.take(t) {
			return true
		}
	}
	notation := c.take("NOTATION")
	if notation && !c.space() {
		p.fail(c, c.i, "NOTATION is followed by a space and a list of names")
		return false
	}
	if !c.take("(") {
		p.fail(c, c.i, "expected an attribute type here")
		return false
	}
	for {
		c.space()
		tok := c.nmtoken()
		if notation && tok != "" {
			c.i -= len(tok)
			tok = c.name()
		}
		if tok == "" {
			p.fail(c, c.i, "expected a name in the list of values")
			return false
		}
		c.space()
		if c.take(")") {
			return true
		}
		if !c.take("|") {
			p.fail(c, c.i, "the values of an enumeration are separated by \"|\"")
			return false
		}
	}
}

// entityDecl: '<!ENTITY' S ('%' S)? Name S (EntityValue | ExternalID
// NDataDecl?) S? '>'.
func (p *xmlWF) entityDecl(c *xmlCur) {
	start := c.i
	c.take("<!ENTITY")
	if !c.space() {
		p.fail(c, c.i, "<!ENTITY is followed by a space and the entity's name")
		return
	}
	param := c.take("%")
	if param && !c.space() {
		p.fail(c, c.i, "a parameter entity is declared as <!ENTITY %% name ...>")
		return
	}
	name := c.name()
	if name == "" || !c.space() {
		p.fail(c, c.i, "the <!ENTITY declaration needs a name and a space here")
		return
	}
	e := &xmlEntity{name: name}
	if c.has("\"") || c.has("'") {
		v, ok := p.entityValue(c)
		if !ok {
			return
		}
		e.value = v
	} else {
		if !p.externalID(c, false) {
			return
		}
		e.external = true
		save := c.i
		if c.space() && c.take("NDATA") {
			if param {
				p.fail(c, c.i-5, "a parameter entity cannot be unparsed (NDATA)")
				return
			}
			if !c.space() || c.name() == "" {
				p.fail(c, c.i, "NDATA is followed by a space and a notation name")
				return
			}
			e.unparsed = true
		} else {
			c.i = save
		}
	}
	p.declEnd(c, start, "<!ENTITY")
	if p.err != nil || p.skipDecl {
		return
	}
	m := p.general
	if param {
		m = p.params
	}
	if m[name] == nil {
		m[name] = e
	}
}

// entityValue reads a quoted entity value and returns its replacement
// text: character references replaced, entity references kept. A "%" is
// not allowed: parameter-entity references may not stand inside a
// declaration of the internal subset.
func (p *xmlWF) entityValue(c *xmlCur) (string, bool) {
	q := c.peek()
	c.i++
	var b strings.Builder
	for {
		if c.eof() {
			p.unclosed(c, c.i, "the entity's value is never closed")
			return "", false
		}
		ch := c.peek()
		switch ch {
		case q:
			c.i++
			return b.String(), true
		case '%':
			p.fail(c, c.i, "a parameter-entity reference may not stand inside a declaration of the internal subset (write %% as &#37;)")
			return "", false
		case '&':
			start := c.i
			name, r, ok := p.refForm(c)
			switch {
			case !ok:
				return "", false
			case name == "":
				b.WriteRune(r) // a character reference is replaced now
			default:
				b.WriteString(c.s[start:c.i]) // an entity reference is kept
			}
		default:
			_, n := utf8.DecodeRuneInString(c.rest())
			b.WriteString(c.s[c.i : c.i+n])
			c.i += n
		}
	}
}

// notationDecl: '<!NOTATION' S Name S (ExternalID | PublicID) S? '>'.
func (p *xmlWF) notationDecl(c *xmlCur) {
	start := c.i
	c.take("<!NOTATION")
	if !p.declName(c, "<!NOTATION") {
		return
	}
	if !c.space() {
		p.fail(c, c.i, "the notation's name is followed by a space and SYSTEM or PUBLIC")
		return
	}
	if !p.externalID(c, true) {
		return
	}
	p.declEnd(c, start, "<!NOTATION")
}
