package validators

import (
	"fmt"
	"strings"
)

// The generators below write answers of about size bytes, the same data in
// each format, for the huge-answer tests and the benchmarks.

const answerCap = 256 << 10 // outputspec.MaxAnswer

// bigJSON is an a2ui-style document: a tree of components, each a Column
// holding two children or a Text leaf.
func bigJSON(size int) string {
	var b strings.Builder
	b.WriteString(`{"root": "c0", "components": [`)
	n := size / 90
	for i := range n {
		if i > 0 {
			b.WriteString(",\n  ")
		}
		l, r := 2*i+1, 2*i+2
		if r < n {
			fmt.Fprintf(&b, `{"id": "c%d", "type": "Column", "children": ["c%d", "c%d"], "gap": %d}`, i, l, r, i%7)
		} else {
			fmt.Fprintf(&b, `{"id": "c%d", "type": "Text", "text": "Item number %d, fine"}`, i, i)
		}
	}
	b.WriteString("]}\n")
	return b.String()
}

// bigSchema describes bigJSON.
const bigSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "required": ["components"],
  "properties": {
    "root": {"type": "string"},
    "components": {
      "type": "array",
      "minItems": 1,
      "items": {"$ref": "#/$defs/component"}
    }
  },
  "$defs": {
    "component": {
      "type": "object",
      "required": ["id", "type"],
      "properties": {
        "id": {"type": "string", "pattern": "^c[0-9]+$"},
        "type": {"enum": ["Column", "Row", "Text", "Button"]},
        "children": {"type": "array", "items": {"type": "string"}, "maxItems": 8},
        "text": {"type": "string", "minLength": 1},
        "gap": {"type": "integer", "minimum": 0}
      },
      "additionalProperties": false
    }
  }
}`

func bigXML(size int) string {
	var b strings.Builder
	b.WriteString("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<findings>\n")
	sev := []string{"low", "medium", "high", "critical"}
	for i := 0; b.Len() < size-200; i++ {
		fmt.Fprintf(&b, "  <finding severity=\"%s\" id=\"f%d\">Unchecked error &amp; leak in <![CDATA[main.go]]> line %d</finding>\n", sev[i%4], i, i)
	}
	b.WriteString("</findings>\n")
	return b.String()
}

func bigCSV(size int) string {
	var b strings.Builder
	b.WriteString("name,severity,file,line\n")
	for i := 0; b.Len() < size-100; i++ {
		fmt.Fprintf(&b, "\"Unchecked error, case %d\",high,pkg/file%d.go,%d\n", i, i%50, i)
	}
	return b.String()
}

func bigYAML(size int) string {
	var b strings.Builder
	b.WriteString("title: findings\nitems:\n")
	for i := 0; b.Len() < size-200; i++ {
		fmt.Fprintf(&b, "  - name: \"Unchecked error %d\"\n    severity: high\n    file: pkg/file%d.go\n    line: %d\n    tags: [a, b]\n", i, i%50, i)
	}
	return b.String()
}

func bigTOML(size int) string {
	var b strings.Builder
	b.WriteString("title = \"findings\"\n\n")
	for i := 0; b.Len() < size-200; i++ {
		fmt.Fprintf(&b, "[[items]]\nname = \"Unchecked error %d\"\nseverity = \"high\"\nfile = \"pkg/file%d.go\"\nline = %d\ntags = [\"a\", \"b\"]\n\n", i, i%50, i)
	}
	return b.String()
}

func bigMarkdown(size int) string {
	var b strings.Builder
	b.WriteString("# Findings\n\n")
	for i := 0; b.Len() < size-400; i++ {
		fmt.Fprintf(&b, "## Finding %d\n\nAn *unchecked* error in `pkg/file%d.go` at line %d, see [docs](https://example.com/%d).\n\n", i, i%50, i, i)
		fmt.Fprintf(&b, "- severity: **high**\n- owner: team %d\n\n", i%9)
		if i%4 == 0 {
			fmt.Fprintf(&b, "```go\nif err := f(%d); err != nil {\n\treturn err\n}\n```\n\n", i)
		}
		if i%10 == 0 {
			b.WriteString("| file | line |\n|---|---|\n| a.go | 1 |\n\n")
		}
	}
	return b.String()
}

// big returns the generated answer for format.
func big(format string, size int) string {
	switch format {
	case "json":
		return bigJSON(size)
	case "xml":
		return bigXML(size)
	case "csv":
		return bigCSV(size)
	case "yaml":
		return bigYAML(size)
	case "toml":
		return bigTOML(size)
	case "markdown":
		return bigMarkdown(size)
	}
	panic(format)
}
