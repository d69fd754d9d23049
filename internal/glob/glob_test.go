package glob_test

import (
	"testing"

	"github.com/coda-acp/coda/internal/glob"
)

func TestPattern_Match(t *testing.T) {
	tests := []struct {
		pattern, path string
		want          bool
	}{
		{"*.go", "main.go", true},
		{"*.go", "a/b/main.go", true},
		{"*.go", "main.go.txt", false},
		{"**/*.go", "main.go", true},
		{"**/*.go", "a/b/c.go", true},
		{"a/*.txt", "a/x.txt", true},
		{"a/*.txt", "a/b/x.txt", false},
		{"a/**/x.txt", "a/x.txt", true},
		{"a/**/x.txt", "a/b/c/x.txt", true},
		{"a/**", "a/b/c", true},
		{"a/**", "b/a", false},
		{"./src/*.ts", "src/x.ts", true},
		{"src/[ab].ts", "src/b.ts", true},
		{"**", "anything/at/all", true},
	}
	for _, tt := range tests {
		g, err := glob.Compile(tt.pattern)
		if err != nil {
			t.Fatalf("%s: %v", tt.pattern, err)
		}
		if got := g.Match(tt.path); got != tt.want {
			t.Errorf("%s matches %s = %v, want %v", tt.pattern, tt.path, got, tt.want)
		}
	}
	for _, bad := range []string{"", "a/[", "/"} {
		if _, err := glob.Compile(bad); err == nil {
			t.Errorf("glob.Compile(%q) accepted a bad pattern", bad)
		}
	}
}
