package taint

import (
	"path/filepath"
	"strings"
	"testing"
)

// Secrets masks what was read of private files wherever it turns up,
// with the gate off as on; what is not private, and text before anything
// private was read, pass through unchanged.
func TestSecrets_Mask(t *testing.T) {
	dir := t.TempDir()
	s := NewSecrets(Launch{}, nil, dir, []string{dir}) // policy off
	said := "The key is sk-live-4f9a8b7c6d5e4f3a2b1c, and the port 8080."
	if got := s.Mask(said); got != said {
		t.Errorf("before any private read, Mask changed %q to %q", said, got)
	}
	s.Read([]Source{{Path: filepath.Join(dir, "README.md"), Text: "sk-live-4f9a8b7c6d5e4f3a2b1c"}})
	if got := s.Mask(said); got != said {
		t.Errorf("a file that is not private taught Mask: %q", got)
	}
	s.Read([]Source{{Path: filepath.Join(dir, ".env"), Text: "API_KEY=sk-live-4f9a8b7c6d5e4f3a2b1c\nPORT=8080\n"}})
	got := s.Mask(said)
	if strings.Contains(got, "4f9a8b7c6d5e4f3a2b1c") || !strings.Contains(got, "sk-…1c") {
		t.Errorf("Mask(%q) = %q, want the key masked", said, got)
	}
	if !strings.Contains(got, "the port 8080") {
		t.Errorf("Mask(%q) = %q: a short value of ordinary text was masked", said, got)
	}
	var none *Secrets
	if none.Mask(said) != said {
		t.Error("a nil Secrets masked")
	}
}
