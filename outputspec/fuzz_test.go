package outputspec

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzCut: the cut is a prefix, within the cap, and valid UTF-8 whenever
// the input is, losing less than one character.
func FuzzCut(f *testing.F) {
	f.Add("aé€😀", 3)
	f.Add("", 0)
	f.Fuzz(func(t *testing.T, s string, n int) {
		if n < 0 || n > len(s)+4 {
			return
		}
		got := cut(s, n)
		if !strings.HasPrefix(s, got) || len(got) > n {
			t.Fatalf("cut(%q, %d) = %q", s, n, got)
		}
		if utf8.ValidString(s) && (!utf8.ValidString(got) || (len(got) < len(s) && n-len(got) >= utf8.UTFMax)) {
			t.Fatalf("cut(%q, %d) = %q: not the longest valid prefix", s, n, got)
		}
	})
}

// FuzzContract_Check: any arguments give a verdict, never a panic, and an
// accepted one has its content within the cap.
func FuzzContract_Check(f *testing.F) {
	for _, s := range []string{`{"content": "{}"}`, `{"content": ""}`, `{"content": "x", "artifacts": ["a", {"path": "b"}]}`, `[`, `null`, `{"content": 1}`} {
		f.Add([]byte(s))
	}
	c, err := Compile(Spec{Format: "json"})
	if err != nil {
		f.Fatal(err)
	}
	root := f.TempDir()
	f.Fuzz(func(t *testing.T, args []byte) {
		v := c.Check(context.Background(), Submission{Args: json.RawMessage(args), Root: root, Stages: []string{"a"}})
		if v.Accepted && len(v.Content) > MaxAnswer {
			t.Fatalf("accepted %d bytes", len(v.Content))
		}
		if !v.Accepted && v.Feedback == "" {
			t.Fatalf("refused without feedback: %s", args)
		}
	})
}
