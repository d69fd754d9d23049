package taint

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"testing"
	"unicode/utf8"
)

// FuzzDecoded (.ci/run fuzzes it by this name, through scripts/fuzz):
// whatever an answer's text, looking behind its format's escapes does not
// panic; and a private value written into a JSON, CSV or XML answer by that
// format's own escaping, cut in two anywhere and put in two strings,
// cells or elements among any other text, is found.
func FuzzDecoded(f *testing.F) {
	f.Add(0, "note: ", " end", 7)
	f.Add(1, "a,b\n", "", 0)
	f.Add(2, "<p>", "</p>", 12)
	f.Add(3, `"\u00`, `\"`, 3)
	f.Fuzz(func(t *testing.T, kind int, before, after string, cut int) {
		formats := []string{"json", "csv", "xml", "toml"}
		format := formats[(kind%len(formats)+len(formats))%len(formats)]
		_ = decoded(format, before+after) // any text: no panic
		if !utf8.ValidString(before + after) {
			return
		}
		const secret = `C:\vault\k3y-"9f8e<7d6c>5b4a&`
		var p privateLines
		p.add("DB_PASS="+secret+"\n", 0)
		cut = (cut%(len(secret)+1) + len(secret) + 1) % (len(secret) + 1)
		a, b := before+secret[:cut], secret[cut:]+after
		var doc bytes.Buffer
		switch format {
		case "json", "toml":
			ja, _ := json.Marshal(a)
			jb, _ := json.Marshal(b)
			if format == "json" {
				doc.WriteString(`{"a": ` + string(ja) + `, "b": ` + string(jb) + `}`)
			} else {
				doc.WriteString("a = " + string(ja) + "\nb = " + string(jb) + "\n")
			}
		case "csv":
			w := csv.NewWriter(&doc)
			w.Write([]string{"part", "text"})
			w.Write([]string{"1", a})
			w.Write([]string{"2", b})
			w.Flush()
		case "xml":
			doc.WriteString("<r><a>")
			xml.EscapeText(&doc, []byte(a))
			doc.WriteString("</a><b>")
			xml.EscapeText(&doc, []byte(b))
			doc.WriteString("</b></r>")
		}
		if format == "toml" && (bytes.ContainsAny([]byte(a+b), "\n\r")) {
			return // a TOML basic string is one line; quotedStrings reads no further
		}
		payloads := append([]string{doc.String()}, decoded(format, doc.String())...)
		if len(p.find(payloads...)) == 0 {
			t.Fatalf("the private value, cut at %d, is not found in the %s answer %q", cut, format, doc.String())
		}
	})
}

// unescapeLoose undoes JSON's escapes wherever they stand, in text that
// may stop in the middle of one.
func TestUnescapeLoose(t *testing.T) {
	for in, want := range map[string]string{
		`plain`:                     `plain`,
		`a\"b\\c\/d\ne\tf`:          "a\"b\\c/d\ne\tf",
		`\u0041\u00e9\ud83d\ude00x`: "Aé😀x",
		`lone \ud83d then`:          "lone \ufffd then",
		`cut \u00`:                  `cut u00`,
		`cut at the end \`:          `cut at the end `,
		`not hex \uzzzz and \u0042`: `not hex uzzzz and B`,
	} {
		if got := unescapeLoose(in); got != want {
			t.Errorf("unescapeLoose(%q) = %q, want %q", in, got, want)
		}
	}
}
