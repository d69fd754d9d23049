package outputspec

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// findingsAnswer returns a JSON answer of just under n bytes that satisfies
// testdata/schemas/findings.json.
func findingsAnswer(n int) string {
	var b strings.Builder
	b.WriteString(`{"title": "A long review", "findings": [`)
	for i := 0; ; i++ {
		item := fmt.Sprintf(`{"severity": "medium", "line": %d, "message": "the value is read before it is checked"}`, i+1)
		if b.Len()+len(item)+3 > n {
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(item)
	}
	b.WriteString("]}")
	return b.String()
}

// BenchmarkContract_Check_jsonSchema256KiB checks a 256 KiB JSON answer
// against a schema: arguments, size, well-formedness, decode, schema.
func BenchmarkContract_Check_jsonSchema256KiB(b *testing.B) {
	c := mustCompile(b, Spec{Format: "json", SchemaFile: testdata("schemas/findings.json")})
	answer := findingsAnswer(MaxAnswer)
	sub := Submission{Args: contentArgs(answer)}
	if v := c.Check(context.Background(), sub); !v.Accepted {
		b.Fatalf("refused: %s", v.Feedback)
	}
	b.SetBytes(int64(len(answer)))
	b.ReportAllocs()
	for b.Loop() {
		c.Check(context.Background(), sub)
	}
}
