//go:build unix

// Package yamlbench measures the YAML decoders the module proxy serves
// against each other and against encoding/json on the same data (issue
// 14), apart from coda's module so that coda does not depend on the ones
// it does not use. Run it here: go test -bench . -count 7
//
// It also records what coda's checks need of a decoder (DESIGN.md §4) and
// which of them give it: a line and a column for every syntax error, a
// duplicate key refused, aliases that cannot blow up.
package yamlbench

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	goccy "github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/parser"
	orgyaml "go.yaml.in/yaml/v3"
	yamlv3 "gopkg.in/yaml.v3"
)

const size = 256 << 10 // an answer at coda's cap

// findings writes n findings as a model writes them, in YAML or JSON.
func findings(format string, n int) string {
	var b strings.Builder
	const msg = "the value is read before it is checked"
	if format == "json" {
		b.WriteString(`{"title": "A long review", "findings": [`)
		for i := range n {
			if i > 0 {
				b.WriteString(",\n  ")
			}
			fmt.Fprintf(&b, `{"severity": "medium", "line": %d, "message": "%s", "tags": ["a", "b"]}`, i+1, msg)
		}
		b.WriteString("]}\n")
		return b.String()
	}
	b.WriteString("title: A long review\nfindings:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - severity: medium\n    line: %d\n    message: %s\n    tags: [a, b]\n", i+1, msg)
	}
	return b.String()
}

// cpuTime is the CPU time the process has used: per operation it is a
// figure other work on a loaded machine does not inflate.
func cpuTime() time.Duration {
	var u syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &u) != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// loop runs op b.N times, reporting its CPU time per operation too.
func loop(b *testing.B, op func() error) {
	start := cpuTime()
	for b.Loop() {
		if err := op(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}

var decoders = map[string]func(string) error{
	// coda's path: parse to an AST (which the alias bound walks), then
	// decode the document's body.
	"goccy": func(s string) error {
		f, err := parser.ParseBytes([]byte(s), 0)
		if err != nil {
			return err
		}
		var v any
		return goccy.NodeToValue(f.Docs[0].Body, &v)
	},
	"gopkg.in-yaml.v3": func(s string) error {
		var v any
		return yamlv3.Unmarshal([]byte(s), &v)
	},
	"go.yaml.in-yaml-v3": func(s string) error {
		var v any
		return orgyaml.Unmarshal([]byte(s), &v)
	},
}

func BenchmarkDecode(b *testing.B) {
	n := 1
	for len(findings("yaml", n*2)) < size {
		n *= 2
	}
	for len(findings("yaml", n+100)) < size {
		n += 100
	}
	y, j := findings("yaml", n), findings("json", n)
	b.Run("json=encoding/json", func(b *testing.B) {
		b.SetBytes(int64(len(j)))
		loop(b, func() error {
			var v any
			return json.Unmarshal([]byte(j), &v)
		})
	})
	for _, name := range []string{"goccy", "gopkg.in-yaml.v3", "go.yaml.in-yaml-v3"} {
		decode := decoders[name]
		b.Run("yaml="+name, func(b *testing.B) {
			b.SetBytes(int64(len(y)))
			loop(b, func() error { return decode(y) })
		})
	}
}

// TestWhatCodaNeeds records, per decoder, what DESIGN.md §4 asks of it.
func TestWhatCodaNeeds(t *testing.T) {
	column := regexp.MustCompile(`\[\d+:\d+\]|line \d+, column \d+`)
	broken := []string{"a: 1\n  b: 2\n", "a: [1, 2\nb: 3\n", "- a\nb: c\n", "a: \"x\n", "key: value: other\n"}
	bomb := "a: &a [x,x,x,x,x,x,x,x,x]\n"
	for i, prev := 0, "a"; i < 8; i++ {
		name := string(rune('b' + i))
		bomb += name + ": &" + name + " [" + strings.TrimSuffix(strings.Repeat("*"+prev+",", 9), ",") + "]\n"
		prev = name
	}
	for _, name := range []string{"goccy", "gopkg.in-yaml.v3", "go.yaml.in-yaml-v3"} {
		decode := decoders[name]
		positioned := 0
		for _, doc := range broken {
			if err := decode(doc); err != nil && column.MatchString(err.Error()) {
				positioned++
			}
		}
		dup := decode("a: 1\na: 2\n") != nil
		t.Logf("%-20s line:column on %d of %d syntax errors; duplicate key refused: %v", name, positioned, len(broken), dup)
		if name == "goccy" && positioned != len(broken) {
			t.Errorf("goccy/go-yaml lost its columns: coda's feedback relies on them")
		}
	}
	// goccy/go-yaml shares an anchor's value between its aliases, so the
	// bomb decodes; the readers after it (coda bounds them) would walk
	// 9^9 values. The yaml.v3 decoders refuse it themselves.
	for _, name := range []string{"gopkg.in-yaml.v3", "go.yaml.in-yaml-v3"} {
		err := decoders[name](bomb)
		t.Logf("%-20s alias bomb: %v", name, err)
	}
}
