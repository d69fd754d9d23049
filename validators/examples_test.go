package validators

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// exampleCase is one answer for a shipped validator: reason "" means it
// passes; otherwise reason is a fragment of the rejection.
type exampleCase struct {
	name, content, reason string
}

func runExample(t *testing.T, file, format string, cases []exampleCase) {
	t.Helper()
	v, err := LoadValidator(filepath.Join("examples", file))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// As outputspec does: the format check first, then the validator.
			if err := Check(format, tc.content); err != nil {
				t.Fatalf("the answer is not well-formed %s: %v", format, err)
			}
			got, err := v.Validate(context.Background(), tc.content)
			if err != nil {
				t.Fatalf("the validator broke: %v", err)
			}
			switch {
			case tc.reason == "" && got != "":
				t.Errorf("rejected: %q", got)
			case tc.reason != "" && !strings.Contains(got, tc.reason):
				t.Errorf("got %q, want a rejection containing %q", got, tc.reason)
			}
		})
	}
}

func TestExample_A2UI(t *testing.T) {
	runExample(t, "a2ui.star", "json", []exampleCase{
		{"good", `{"root": "main", "components": [
			{"id": "main", "type": "Column", "children": ["title", "card"]},
			{"id": "title", "type": "Text", "text": "Hello"},
			{"id": "card", "type": "Card", "child": "ok"},
			{"id": "ok", "type": "Button", "label": "OK", "action": "submit"}]}`, ""},
		{"huge", bigJSON(answerCap), ""},
		{"not an object", `[1, 2]`, `the document must be a JSON object with a "components" list`},
		{"no components", `{"root": "x"}`, `non-empty "components" list`},
		{"duplicate id", `{"components": [{"id": "a", "type": "Text", "text": "x"}, {"id": "a", "type": "Divider"}]}`,
			`components[1]: id "a" is already used by components[0]`},
		{"missing id", `{"components": [{"type": "Divider"}]}`, `components[0] needs a non-empty string "id"`},
		{"unknown type", `{"components": [{"id": "a", "type": "Slider"}]}`, `component "a": unknown type "Slider" (known: Button, Card,`},
		{"missing field", `{"components": [{"id": "a", "type": "Text"}]}`, `component "a": a Text needs "text"`},
		{"dangling child", `{"components": [{"id": "a", "type": "Row", "children": ["b", 3]}]}`,
			`component "a" refers to "b", which is not a component id; component "a" refers to 3, which is not a component id`},
		{"bad root", `{"root": "nope", "components": [{"id": "a", "type": "Divider"}]}`, `"root" is "nope", which is not a component id`},
		{"self", `{"components": [{"id": "a", "type": "Card", "child": "a"}]}`, `component "a" contains itself`},
		{"cycle", `{"components": [{"id": "a", "type": "Row", "children": ["b"]}, {"id": "b", "type": "Card", "child": "c"}, {"id": "c", "type": "Column", "children": ["a"]}]}`,
			"components contain each other in a cycle: a -> b -> c -> a"},
		{"many problems", `{"components": [` + strings.Repeat(`{"type": "X"},`, 12) + `{"type": "X"}]}`, "; and 16 more"},
	})
}

func TestExample_CSVHeader(t *testing.T) {
	runExample(t, "csv_header.star", "csv", []exampleCase{
		{"good", "name,severity,file,line\nnil check,high,main.go,12\n", ""},
		{"spaces around names", "name, severity, file, line\nx,high,a.go,1\n", ""},
		{"huge", bigCSV(answerCap), ""},
		{"header only", "name,severity,file,line\n", "the CSV has a header but no data rows"},
		{"no header", "nil check,high,main.go,12\n", "the first row must be the header name,severity,file,line, but it is nil check,high,main.go,12 (missing name, severity, file, line; unexpected nil check, high, main.go, 12)"},
		{"wrong case", "Name,Severity,File,Line\nx,high,a.go,1\n", "the header must be lower-case"},
		{"wrong order", "severity,name,file,line\nhigh,x,a.go,1\n", "the columns are in the wrong order"},
		{"missing column", "name,severity,file\nx,high,a.go\n", "missing line"},
	})
}

func TestExample_XMLFindings(t *testing.T) {
	runExample(t, "xml_findings.star", "xml", []exampleCase{
		{"good", `<findings><finding severity="high">Unchecked error in main.go</finding><finding severity="low"><![CDATA[Typo in <b>docs</b>]]></finding></findings>`, ""},
		{"no findings", `<findings/>`, ""},
		{"huge", bigXML(answerCap), ""},
		{"wrong root", `<results><finding severity="high">x</finding></results>`, "the root element must be <findings>, not <results>"},
		{"wrong child", `<findings><note>x</note></findings>`, "<findings> may contain only <finding> elements, not <note>"},
		{"no severity", `<findings><finding>x</finding></findings>`, "finding 1 has no severity attribute (one of low, medium, high, critical)"},
		{"bad severity", `<findings><finding severity="urgent">x</finding></findings>`, `finding 1 has severity="urgent"; use one of low, medium, high, critical`},
		{"empty text", `<findings><finding severity="low">x</finding><finding severity="low">  </finding></findings>`, "finding 2 is empty"},
	})
}
