package taint

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// decoded are the texts an answer's format hides behind its own escapes,
// for the gate to look in beside the answer as written: a JSON document's
// strings (`\\` is one backslash, `\u0041` an A), a CSV document's cells,
// an XML document's text and attribute values (entities replaced), and for
// other formats (TOML, YAML, …) the double-quoted strings, unescaped as
// JSON's are. The pieces come each alone and then all run together, so a
// secret cut across two strings or cells is found whole. format is the
// answer's label; nil when it names none of these, or nothing is escaped.
func decoded(format, text string) []string {
	var parts []string
	switch strings.ToLower(format) {
	case "json", "jsonl", "ndjson":
		parts = jsonStrings(text)
	case "csv", "tsv":
		parts = csvCells(text, format)
	case "xml", "html", "svg":
		parts = xmlTexts(text)
	default:
		parts = quotedStrings(text)
	}
	if len(parts) == 0 {
		return nil
	}
	return append(parts, strings.Join(parts, ""))
}

// jsonStrings are the keys and string values of the JSON values in text,
// decoded; what follows a value that does not decode is read for its
// quoted strings instead.
func jsonStrings(text string) []string {
	var out []string
	dec := json.NewDecoder(strings.NewReader(text))
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return out
		}
		if err != nil {
			return append(out, quotedStrings(text[dec.InputOffset():])...)
		}
		if s, ok := tok.(string); ok {
			out = append(out, s)
		}
	}
}

// csvCells are the cells of a CSV (or, by its label, TSV) document.
func csvCells(text, format string) []string {
	r := csv.NewReader(strings.NewReader(text))
	r.FieldsPerRecord, r.LazyQuotes = -1, true
	if strings.EqualFold(format, "tsv") {
		r.Comma = '\t'
	}
	var out []string
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return out
		}
		var pe *csv.ParseError
		if err != nil && !errors.As(err, &pe) {
			return out
		}
		out = append(out, rec...)
	}
}

// xmlTexts are an XML document's character data and attribute values,
// its entities replaced.
func xmlTexts(text string) []string {
	dec := xml.NewDecoder(strings.NewReader(text))
	dec.Strict = false
	dec.Entity = xml.HTMLEntity
	var out []string
	for {
		tok, err := dec.Token()
		if err != nil {
			return out
		}
		switch t := tok.(type) {
		case xml.CharData:
			if s := string(bytes.TrimSpace(t)); s != "" {
				out = append(out, s)
			}
		case xml.StartElement:
			for _, a := range t.Attr {
				out = append(out, a.Value)
			}
		}
	}
}

// quotedStrings are the double-quoted strings in text that hold an escape,
// unescaped as JSON's are (TOML's basic strings and YAML's double-quoted
// ones escape the same way).
func quotedStrings(text string) []string {
	var out []string
	for i := 0; i < len(text); i++ {
		if text[i] != '"' {
			continue
		}
		j, escaped := i+1, false
		for j < len(text) && text[j] != '"' && text[j] != '\n' {
			if text[j] == '\\' {
				escaped = true
				j++
			}
			j++
		}
		if j >= len(text) || text[j] != '"' {
			continue
		}
		if escaped {
			var s string
			if json.Unmarshal([]byte(text[i:j+1]), &s) == nil {
				out = append(out, s)
			}
		}
		i = j
	}
	return out
}

// unescapeLoose is text with JSON's string escapes undone wherever they
// stand, for text that may not be JSON at all (the head of arguments cut
// at their cap): `\"` is a quote, `\u0041` an A, a surrogate pair one
// character; an escape cut off at the end is dropped.
func unescapeLoose(text string) string {
	if !strings.Contains(text, `\`) {
		return text
	}
	var b strings.Builder
	b.Grow(len(text))
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		if i+1 >= len(text) {
			break
		}
		i++
		switch e := text[i]; e {
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
			r, ok := hex4(text[i+1:])
			if !ok {
				b.WriteByte('u') // cut, or no escape: as itself
				continue
			}
			i += 4
			if utf16.IsSurrogate(r) && strings.HasPrefix(text[i+1:], `\u`) {
				if r2, ok := hex4(text[i+3:]); ok {
					if p := utf16.DecodeRune(r, r2); p != utf8.RuneError {
						r, i = p, i+6
					}
				}
			}
			b.WriteRune(r)
		default:
			b.WriteByte(e) // \" \\ \/, and what JSON would refuse, as itself
		}
	}
	return b.String()
}

// hex4 reads the four hex digits that begin s, if it begins with four.
func hex4(s string) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range []byte(s[:4]) {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
