package validators

import (
	"encoding/xml"
	"errors"
	"io"
	"strings"
)

// checkXML accepts one well-formed XML 1.0 document (xmlwf.go): one root
// element, no text outside it, no duplicate attributes, the internal DTD
// subset well-formed and its entities within bounds.
func checkXML(content string) error {
	if e := frame(content, kindXML); e != nil {
		return e
	}
	if _, e := xmlWellFormed(content); e != nil {
		return e
	}
	return nil
}

// An xmlVisitor sees the elements of a document as walkXML meets them.
type xmlVisitor interface {
	start(el xml.StartElement)
	text(data []byte)
	end()
}

// walkXML checks content as checkXML does, then drains it through a
// strict encoding/xml decoder and reports each element to v. The internal
// entities whose text is plain text expand as that text; encoding/xml
// knows no others, so a document whose entities hold markup, or whose
// names XML 1.0's first edition did not allow, passes Check and fails
// here.
func walkXML(content string, v xmlVisitor) *Error {
	entities, e := xmlWellFormed(content)
	if e != nil {
		return e
	}
	d := xml.NewDecoder(strings.NewReader(content))
	d.Strict = true
	d.Entity = entities
	// content is already text: an encoding declaration changes nothing.
	d.CharsetReader = func(_ string, r io.Reader) (io.Reader, error) { return r, nil }

	var stack []openTag
	roots := 0
	for {
		off := int(d.InputOffset())
		tok, err := d.Token()
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return xmlSyntax(content, d, err, stack)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if len(stack) == 0 {
				roots++
				if roots > 1 {
					return errorAt(content, off, "a second root element <%s> starts here: an XML document has exactly one root element, so wrap the elements in one", t.Name.Local)
				}
			}
			if dup := duplicateAttr(t.Attr); dup != "" {
				return errorAt(content, off, "element <%s> has the attribute %q twice: keep one", t.Name.Local, dup)
			}
			stack = append(stack, openTag{t.Name.Local, off})
			if v != nil {
				v.start(t)
			}
		case xml.EndElement:
			stack = stack[:len(stack)-1]
			if v != nil {
				v.end()
			}
		case xml.CharData:
			if len(stack) == 0 {
				if s := strings.TrimSpace(string(t)); s != "" {
					at := off + strings.Index(string(t), s[:1])
					if roots == 0 {
						return errorAt(content, at, "there is text before the root element (%s): the answer must be the XML document alone", quote(firstLine(s)))
					}
					return errorAt(content, at, "there is text after the root element (%s): the answer must be the XML document alone, with nothing after it", quote(firstLine(s)))
				}
			} else if v != nil {
				v.text(t)
			}
		}
	}
	if roots == 0 {
		return &Error{Msg: "the answer has no root element: submit the XML document, such as <result>...</result>"}
	}
	return nil
}

type openTag struct {
	name string
	off  int
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return strings.TrimSpace(l)
}

// duplicateAttr returns the name of an attribute given twice, or "".
func duplicateAttr(attrs []xml.Attr) string {
	if len(attrs) > 16 {
		seen := make(map[xml.Name]bool, len(attrs))
		for _, a := range attrs {
			if seen[a.Name] {
				return attrName(a.Name)
			}
			seen[a.Name] = true
		}
		return ""
	}
	for i := 1; i < len(attrs); i++ {
		for j := range i {
			if attrs[i].Name == attrs[j].Name {
				return attrName(attrs[i].Name)
			}
		}
	}
	return ""
}

// xmlSyntax positions and words an encoding/xml error.
func xmlSyntax(content string, d *xml.Decoder, err error, stack []openTag) *Error {
	off := int(d.InputOffset())
	var se *xml.SyntaxError
	if !errors.As(err, &se) {
		return errorAt(content, off, "%v", err)
	}
	if strings.HasPrefix(se.Msg, "unexpected EOF") {
		end := len(strings.TrimRightFunc(content, isSpace))
		if len(stack) > 0 {
			open := stack[len(stack)-1]
			line, col := position(content, open.off)
			return errorAt(content, end, "the XML ends while <%s> (line %d, column %d) is still open: was the answer cut off? Close every open element", open.name, line, col)
		}
		return errorAt(content, end, "the XML ends in the middle of a tag: was the answer cut off?")
	}
	msg := se.Msg
	if strings.Contains(msg, "entity") {
		msg += ": XML knows only &amp; &lt; &gt; &quot; &apos; (write a literal & as &amp;)"
	}
	return errorAt(content, max(off-1, 0), "%s", msg)
}
