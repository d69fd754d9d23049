//go:build unix

package fileuri_test

import (
	"testing"

	"github.com/coda-acp/coda/internal/fileuri"
)

func TestPath(t *testing.T) {
	for _, tt := range []struct{ uri, want string }{
		{"file:///home/u/.env", "/home/u/.env"},
		{"file:///home/u/a%20b.txt", "/home/u/a b.txt"},
		{"zed:///work/x.go", "/work/x.go"},    // any scheme's path part
		{"src/.env", "src/.env"},              // relative: the gate takes it against the working directory
		{"untitled:Untitled-1", "Untitled-1"}, // opaque
		{"https://example.com", ""},
	} {
		if got := fileuri.Path(tt.uri); got != tt.want {
			t.Errorf("Path(%q) = %q, want %q", tt.uri, got, tt.want)
		}
	}
}
