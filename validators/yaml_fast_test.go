package validators

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fastYAMLDocs are answers the fast path reads (fast) or leaves to goccy.
var fastYAMLDocs = []struct {
	doc  string
	fast bool
}{
	{"title: A long review\nfindings:\n  - severity: medium\n    line: 12\n    message: the value is read before it is checked\n", true},
	{"a: 1\nb: -2\nc: 1.5\nd: true\ne: false\nf: null\ng: ~\nh:\n", true},
	{"name: \"quoted: yes\"\nother: 'single'\nlist: [a, b, 3]\nmap: {left: 1, right: two}\n", true},
	{"- a\n- b: c\n  d: [1, 2]\n- - nested\n  - again\n", true},
	{"key: value # a comment\n# a line of comment\nnext: café au lait\n", true},
	{"path: src/main.go\nsentence: It reads, then checks.\n", true},
	{"a: use foo[0] here\nb: http://x.org/a\nc: b ]\nd: it's\ne: say \"hi\"\nf: b&c *d\ng: b#c\n", true},
	{"a:\n- x\n- z\nb: 1\n", true},            // a sequence in its key's column
	{"- a:\n  - x\n  - z\n- b\n", true},       // the same in an item
	{"- a: 1\n  b:\n    - c\n  d: e\n", true}, // a mapping in an item
	{"- - - x\n    - w\n  - z\n- w\n", true},  // sequences in items
	{"a:\n  b:\n    c: 1\n  d: [1, {e: f}]\nz: 'q'\n", true},
	{"- \"note: x\"\n- 'a': 1\n", true}, // a quoted item, a quoted key
	{"a: [1,2]\nb: {c: 1,d: 2}\nc: [a b, c d]\nd: []\ne: {}\nf: [it's]\n", true},
	{"a: [1, [2, [3]], {b: [4]}]\nc: {\"b\": 1, 'c': 'd'}\n", true},
	{"key with space: 1\na[0]: 1\nb: \"\"\nc: ''\n", true},
	{"#head\na: 1   \nb: 2  # c\nc: 1 #\n\n  # further in\nd:\n\n  e: 1\n", true},
	{"a: 1.0\nb: -3.25\nc: 0\nd: 0.0\ne: 9223372036854775807\n", true},
	{"a: Infinity\nb: Nope\nc: nil\nd: None\ne: TRUE_\n", true},
	{"a: y\n", false},                 // a YAML 1.1 boolean
	{"a: {b: }\n", false},             // an empty value in a flow mapping
	{"a: [1, 2,]\n", false},           // a trailing comma
	{"a: [b: 1]\n", false},            // a pair in a flow sequence
	{"a: b: c\n", false},              // a mapping on a value's line
	{"a: # nothing\n  b: 1\n", false}, // a comment after a key
	{"- \n- a\n", false},              // an empty item
	{"-  a\n", false},                 // an item further in
	{"a: x\n b: q\n", false},          // a key further in
	{"a: 'x' y\n", false},             // text after a quoted string
	{"a: 9223372036854775808\n", false},
	{"a: café\nb: 日本\n", false}, // a value not letters-first in ASCII
	{"ä: 1\n", false},
	{"A<<: 1\n", false},             // goccy takes it for a merge key
	{"a: yes\n", false},             // a YAML 1.1 boolean to some readers
	{"a: 0x1F\n", false},            // another notation
	{"a: 1e3\n", false},             // exponent
	{"a: 007\n", false},             // leading zero
	{"a: 2001-12-14\n", false},      // a timestamp
	{"a: \"x\\ty\"\n", false},       // an escape
	{"a: 'it''s'\n", false},         // a doubled quote
	{"a: |\n  block\n", false},      // a block scalar
	{"a: first\n  second\n", false}, // folded over two lines
	{"a: &x 1\nb: *x\n", false},     // anchor and alias
	{"a: !!str 1\n", false},         // a tag
	{"a: 1\na: 2\n", false},         // a duplicate key: goccy refuses it
	{"<<: {a: 1}\n", false},         // a merge key
	{"---\na: 1\n", false},          // a document marker
	{"a: 1\n---\nb: 2\n", false},    // a second document
	{"just prose", false},           // a scalar root
	{"a:\tb\n", false},              // a tab
	{"a: 1\r\nb: 2\r\n", false},     // CRLF
	{"a: [1, 2\n", false},           // broken: goccy says where
	{"? complex\n: key\n", false},   // an explicit key
	{"1: one\n", false},             // a key that is a number
	{"a: -0\n", false},
	{"a: .5\n", false},
}

// The fast path reads plain answers to exactly goccy's data, and leaves the
// rest to goccy (whose errors and bounds then apply).
func TestFastYAML(t *testing.T) {
	for _, tc := range fastYAMLDocs {
		got, ok := fastYAML(tc.doc)
		if ok != tc.fast {
			t.Errorf("fastYAML(%q) took it: %v, want %v", tc.doc, ok, tc.fast)
		}
		if !ok {
			continue
		}
		want, err := decodeYAMLGoccy(tc.doc)
		if err != nil {
			t.Errorf("fastYAML(%q) read what goccy refuses: %v", tc.doc, err)
			continue
		}
		if diff := sameData(want, got); diff != "" {
			t.Errorf("fastYAML(%q) (-goccy +fast):\n%s", tc.doc, diff)
		}
	}
}

// yamlGen writes random documents in the layouts a model writes, with
// words that the fast path reads and words it must leave to goccy.
type yamlGen struct{ r *rand.Rand }

var genWords = []string{"a", "b", "key", "Value", "x y", "n", "yes", "null", "true", "12", "-3", "1.5", "0", "007", "it's", "a: b", "c#d", "e #f", "g[0]", "h,i", "~", "\"q\"", "'s'", "\"e: f\"", "'g # h'", "A<<", "http://x/y", "<<", "-", "- x", "[1, 2]", "{k: v}", "[]", "{}", "''", "\"\""}

func (g yamlGen) word() string { return genWords[g.r.IntN(len(genWords))] }

func (g yamlGen) sp() string { return strings.Repeat(" ", g.r.IntN(2)+1) }

func (g yamlGen) comment() string {
	switch g.r.IntN(8) {
	case 0:
		return " # note"
	case 1:
		return "  "
	}
	return ""
}

// block writes a block collection at indent ind; inItem: right after an
// item's "- ", on its line.
func (g yamlGen) block(b *strings.Builder, ind int, depth int, inItem bool) {
	pad := strings.Repeat(" ", ind)
	n := g.r.IntN(3) + 1
	if g.r.IntN(2) == 0 || depth > 3 {
		for i := range n {
			if i > 0 || !inItem {
				b.WriteString(pad)
			}
			b.WriteString(g.word() + ":")
			g.value(b, ind, depth)
		}
		return
	}
	for i := range n {
		if i > 0 || !inItem {
			b.WriteString(pad)
		}
		b.WriteString("-")
		if g.r.IntN(4) == 0 {
			b.WriteString(" ")
			g.block(b, ind+2, depth+1, true)
		} else {
			b.WriteString(" " + g.word() + g.comment() + "\n")
		}
		if g.r.IntN(10) == 0 {
			b.WriteString(strings.Repeat(" ", g.r.IntN(6)) + "# c\n")
		}
	}
}

// value writes what follows a key's ":".
func (g yamlGen) value(b *strings.Builder, ind, depth int) {
	switch g.r.IntN(6) {
	case 0:
		b.WriteString(g.comment() + "\n")
	case 1:
		b.WriteString("\n")
		if g.r.IntN(10) == 0 {
			b.WriteString("\n")
		}
		g.block(b, ind+1+g.r.IntN(3), depth+1, false)
	case 2:
		b.WriteString("\n")
		g.block(b, ind, depth+1, false)
	default:
		b.WriteString(g.sp() + g.word() + g.comment() + "\n")
	}
}

// The fast path reads generated documents to goccy's data: nested block
// collections in both layouts of a sequence under a key, flow
// collections, comments, and words either side of the fast path's edge.
func TestFastYAML_generated(t *testing.T) {
	g := yamlGen{rand.New(rand.NewPCG(1, 2))}
	fast := 0
	const n = 20000
	for range n {
		var b strings.Builder
		g.block(&b, 0, 0, false)
		doc := b.String()
		got, ok := fastYAML(doc)
		if !ok {
			continue
		}
		fast++
		want, err := decodeYAMLGoccy(doc)
		if err != nil {
			t.Fatalf("fastYAML(%q) read what goccy refuses: %v", doc, err)
		}
		if diff := sameData(want, got); diff != "" {
			t.Fatalf("fastYAML(%q) (-goccy +fast):\n%s", doc, diff)
		}
	}
	if fast < n/5 {
		t.Errorf("the fast path took %d of %d generated documents: the generator no longer reaches it", fast, n)
	}
}

// FuzzYAML_fast holds the fast path to goccy: what it reads, goccy reads
// to the same data; the rest goes to goccy anyway.
func FuzzYAML_fast(f *testing.F) {
	addSeeds(f)
	for _, tc := range fastYAMLDocs {
		f.Add(tc.doc)
	}
	f.Add(big("yaml", 4<<10))
	g := yamlGen{rand.New(rand.NewPCG(3, 4))}
	for range 32 {
		var b strings.Builder
		g.block(&b, 0, 0, false)
		f.Add(b.String())
	}
	f.Fuzz(func(t *testing.T, doc string) {
		if yamlTooDeep(doc) != nil {
			return
		}
		got, ok := fastYAML(doc)
		if !ok {
			return
		}
		want, err := decodeYAMLGoccy(doc)
		if err != nil {
			t.Fatalf("fastYAML(%q) read what goccy refuses: %v", doc, err)
		}
		if diff := sameData(want, got); diff != "" {
			t.Fatalf("fastYAML(%q) (-goccy +fast):\n%s", doc, diff)
		}
		if !strings.Contains(doc, "\t") && Check("yaml", doc) != nil && frame(doc, kindYAML) == nil {
			t.Fatalf("Check refuses %q, which both decoders read", doc)
		}
	})
}

// sameData is "" when want and got are the same data, else cmp.Diff's
// account of how they differ. reflect.DeepEqual decides: cmp.Diff alone
// takes time exponential in the nesting of []any (32 levels of "- " took
// minutes, and hung FuzzYAML_fast), so it only words a difference found.
func sameData(want, got any) string {
	if reflect.DeepEqual(want, got) {
		return ""
	}
	return cmp.Diff(want, got)
}
