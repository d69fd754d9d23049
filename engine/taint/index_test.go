package taint

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A session's Index walks its roots once: a later turn's gate and matcher
// use what it found while nothing changed, a stat of each folder and
// private file telling them so, and a private file added, edited or
// removed since is seen at the next turn.
func TestIndex_oncePerSession(t *testing.T) {
	cwd := t.TempDir()
	write := func(rel, content string) {
		t.Helper()
		p := filepath.Join(cwd, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(".env", "API_KEY=sk-proj-4fGh82kLmN0pQrStUvWxYz12f3\n")
	write("src/a/main.go", "package main\n")
	ix := NewIndex()
	// The clock an hour on: every folder's time is settled, as a
	// session's is once the tree is older than its first walk.
	ix.now = func() time.Time { return time.Now().Add(time.Hour) }
	turn := func() *Secrets {
		s := NewSecrets(Launch{}, nil, cwd, []string{cwd})
		s.UseIndex(ix)
		return s
	}
	found := func(s *Secrets, text string) int { return len(s.Found(text, nil)) }
	if n := found(turn(), "sk-proj-4fGh82kLmN0pQrStUvWxYz12f3"); n != 1 {
		t.Fatalf("turn 1 found %d files", n)
	}
	first := ix.files
	g, _ := New(Launch{Policy: Deny}, nil, cwd, []string{cwd})
	g.UseIndex(ix)
	if found := g.Found("sk-proj-4fGh82kLmN0pQrStUvWxYz12f3", nil); len(found) != 1 || ix.files != first {
		t.Fatalf("the gate of turn 2 found %v, walked again: %v", found, ix.files != first)
	}
	if s := turn(); found(s, "the key") != 0 || ix.files != first {
		t.Fatalf("turn 3 walked the roots again though nothing changed")
	}

	write("src/a/secrets/db", "DB_PASSWORD=Tr0ub4dor-and-3-more\n") // a new folder, a new private file
	if n := found(turn(), "password Tr0ub4dor-and-3-more"); n != 1 || ix.files == first {
		t.Errorf("a private file added in a new folder: found %d", n)
	}
	second := ix.files
	write(".env", "API_KEY=sk-live-9z8y7x6w5v4u3t2s1r0q\n") // edited in place: its folder's time may not change
	if n := found(turn(), "sk-live-9z8y7x6w5v4u3t2s1r0q"); n != 1 || ix.files == second {
		t.Errorf("a private file edited: found %d", n)
	}
	if err := os.Remove(filepath.Join(cwd, ".env")); err != nil {
		t.Fatal(err)
	}
	if n := found(turn(), "sk-live-9z8y7x6w5v4u3t2s1r0q"); n != 0 {
		t.Errorf("a private file removed: still found")
	}
	if w := ix.Untold(); w != "" {
		t.Errorf("Untold = %q after whole walks", w)
	}
}

// A folder changed within the clock's tick of a walk (a file system that
// keeps seconds) is walked again at the next turn: a file added in that
// tick is not missed.
func TestIndex_unsettledFolder(t *testing.T) {
	cwd := t.TempDir()
	ix := NewIndex() // the real clock: cwd was made just now
	s := NewSecrets(Launch{}, nil, cwd, []string{cwd})
	s.UseIndex(ix)
	s.Found("anything", nil)
	first := ix.files
	s = NewSecrets(Launch{}, nil, cwd, []string{cwd})
	s.UseIndex(ix)
	s.Found("anything", nil)
	if ix.files == first {
		t.Errorf("a folder changed %v before the walk was trusted", time.Since(first.dirs[cwd]))
	}
}

// A workspace too large to walk whole says so once a session, not at
// every turn and not never.
func TestIndex_tooLargeSaidOnce(t *testing.T) {
	defer func(n int) { maxRootEntries = n }(maxRootEntries)
	maxRootEntries = 10
	cwd := t.TempDir()
	for i := range 20 {
		os.WriteFile(filepath.Join(cwd, strings.Repeat("f", i+1)), []byte("x"), 0o644)
	}
	ix := NewIndex()
	s := NewSecrets(Launch{}, nil, cwd, []string{cwd})
	s.UseIndex(ix)
	s.Found("anything", nil)
	if w := ix.Untold(); !strings.Contains(w, "too large") {
		t.Errorf("Untold = %q, want the workspace said to be too large", w)
	}
	if w := ix.Untold(); w != "" {
		t.Errorf("said twice: %q", w)
	}
}
