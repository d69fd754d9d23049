package taint

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coda-acp/coda/internal/rootfs"
)

// A session opened on the folder an earlier one kept its listing in
// reads no folder while none changed, and finds the private files all
// the same, as they are now; a folder changed since makes it walk.
func TestOpenIndex_nextSessionWalksNothing(t *testing.T) {
	cwd, state := t.TempDir(), t.TempDir()
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
	for d := range 30 {
		write(fmt.Sprintf("pkg%02d/main.go", d), "package main\n")
	}
	write("pkg07/.env", "API_KEY=sk-proj-4fGh82kLmN0pQrStUvWxYz12f3\n")
	// session runs one turn of a new session (a new process: a new
	// Index) and says which files text brought and how many folders the
	// turn read.
	session := func(clock time.Duration, text string) (int, int64) {
		t.Helper()
		ix := OpenIndex(state)
		// The clock on: every folder's time is settled, as a workspace's
		// is once it is older than the walk.
		ix.now = func() time.Time { return time.Now().Add(clock) }
		s := NewSecrets(Launch{}, nil, cwd, []string{cwd})
		s.UseIndex(ix)
		before := rootfs.FoldersRead.Load()
		n := len(s.Found(text, nil))
		return n, rootfs.FoldersRead.Load() - before
	}
	if n, read := session(time.Hour, "sk-proj-4fGh82kLmN0pQrStUvWxYz12f3"); n != 1 || read < 31 {
		t.Fatalf("the first session found %d files reading %d folders, want 1 reading 31", n, read)
	}
	if n, read := session(time.Hour, "sk-proj-4fGh82kLmN0pQrStUvWxYz12f3"); n != 1 || read != 0 {
		t.Errorf("the next session found %d files reading %d folders, want 1 reading none", n, read)
	}
	write("pkg07/.env", "API_KEY=sk-live-9z8y7x6w5v4u3t2s1r0q\n") // edited in place: no folder changes
	if n, read := session(time.Hour, "sk-live-9z8y7x6w5v4u3t2s1r0q"); n != 1 || read != 0 {
		t.Errorf("a private file edited: found %d reading %d folders, want 1 reading none", n, read)
	}
	write("pkg12/secrets/db", "DB_PASSWORD=Tr0ub4dor-and-3-more\n") // a new folder, a new private file
	if n, read := session(time.Hour, "password Tr0ub4dor-and-3-more"); n != 1 || read == 0 {
		t.Errorf("a private file added in a new folder: found %d reading %d folders, want 1 by a walk", n, read)
	}
	if n, read := session(2*time.Hour, "password Tr0ub4dor-and-3-more"); n != 1 || read != 0 {
		t.Errorf("after that walk: found %d reading %d folders, want 1 reading none", n, read)
	}
	// Other globs are another listing.
	ix := OpenIndex(state)
	s := NewSecrets(Launch{Config: &Config{Private: []string{"**/*.secret"}}}, nil, cwd, []string{cwd})
	s.UseIndex(ix)
	before := rootfs.FoldersRead.Load()
	s.Found("anything", nil)
	if rootfs.FoldersRead.Load() == before {
		t.Errorf("a session with other private globs took the listing of the default ones")
	}
}

// A walk a bound stopped is kept as it was, and the next session says so
// once, as the one that walked did.
func TestOpenIndex_tooLargeSaidOncePerSession(t *testing.T) {
	defer func(n int) { maxRootEntries = n }(maxRootEntries)
	maxRootEntries = 10
	cwd, state := t.TempDir(), t.TempDir()
	for i := range 20 {
		os.WriteFile(filepath.Join(cwd, strings.Repeat("f", i+1)), []byte("x"), 0o644)
	}
	for range 2 {
		ix := OpenIndex(state)
		ix.now = func() time.Time { return time.Now().Add(time.Hour) }
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
}

// The folder keeps the most recent maxKept listings, one a workspace.
func TestOpenIndex_keepsBounded(t *testing.T) {
	state := t.TempDir()
	for range maxKept + 3 {
		cwd := t.TempDir()
		s := NewSecrets(Launch{}, nil, cwd, []string{cwd})
		s.UseIndex(OpenIndex(state))
		s.Found("anything", nil)
	}
	entries, err := os.ReadDir(state)
	if err != nil || len(entries) != maxKept {
		t.Errorf("%d listings kept (%v), want %d", len(entries), err, maxKept)
	}
}
