package store_test

import (
	"path/filepath"
	"testing"

	"github.com/coda-acp/coda/store"
)

// A store made of no directory is nil, and keeps nothing.
func TestNew(t *testing.T) {
	if s := store.New(""); s != nil || s.Dir() != "" || s.RunDir("r") != "" {
		t.Errorf("New(\"\") = %v, Dir %q, RunDir %q", s, s.Dir(), s.RunDir("r"))
	}
	s := store.New("/state")
	if s.Dir() != "/state" || s.RunDir("r/workers/w1") != filepath.FromSlash("/state/runs/r/workers/w1") {
		t.Errorf("Dir %q, RunDir %q", s.Dir(), s.RunDir("r/workers/w1"))
	}
}
