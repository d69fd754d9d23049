package taint

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"strings"
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
