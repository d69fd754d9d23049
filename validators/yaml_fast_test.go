package validators

import (
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
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("fastYAML(%q) (-goccy +fast):\n%s", tc.doc, diff)
		}
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
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("fastYAML(%q) (-goccy +fast):\n%s", doc, diff)
		}
		if !strings.Contains(doc, "\t") && Check("yaml", doc) != nil && frame(doc, kindYAML) == nil {
			t.Fatalf("Check refuses %q, which both decoders read", doc)
		}
	})
}
