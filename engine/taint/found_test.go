package taint

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// Found knows the private files under every root, read once: a result
// that carries a secret of one names it; an ordinary line, a file that is
// not private, a symlink out of the roots and the folders a walk prunes
// bring nothing.
func TestGate_found(t *testing.T) {
	cwd, extra, outside := t.TempDir(), t.TempDir(), t.TempDir()
	write := func(path, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(cwd, ".env"), "API_KEY=sk-proj-4fGh82kLmN0pQrStUvWxYz12f3\nPORT=5432\n")
	write(filepath.Join(extra, "config", "secrets", "db"), "DB_PASSWORD=Tr0ub4dor-and-3-more\n")
	write(filepath.Join(cwd, "notes.txt"), "TOKEN=not-private-9f8e7d6c5b4a\n")
	write(filepath.Join(cwd, "node_modules", "x", ".env"), "KEY=pruned-9f8e7d6c5b4a3210\n")
	write(filepath.Join(outside, "id_rsa"), "OUT=outside-9f8e7d6c5b4a3210\n")
	if err := os.Symlink(filepath.Join(outside, "id_rsa"), filepath.Join(cwd, "id_rsa")); err != nil {
		t.Fatal(err)
	}
	g, err := New(Launch{Policy: Deny}, nil, cwd, []string{cwd, extra})
	if err != nil {
		t.Fatal(err)
	}
	for text, want := range map[string]string{
		"./.env:API_KEY=sk-proj-4fGh82kLmN0pQrStUvWxYz12f3": filepath.Join(cwd, ".env"),
		"password Tr0ub4dor-and-3-more":                     filepath.Join(extra, "config", "secrets", "db"),
		"it listens on PORT=5432":                           "",
		"TOKEN=not-private-9f8e7d6c5b4a":                    "",
		"KEY=pruned-9f8e7d6c5b4a3210":                       "",
		"OUT=outside-9f8e7d6c5b4a3210":                      "",
	} {
		found := g.Found(text, nil)
		switch {
		case want == "" && len(found) > 0:
			t.Errorf("Found(%q) = %+v, want nothing", text, found)
		case want != "" && (len(found) != 1 || found[0].Path != want || !found[0].Named):
			t.Errorf("Found(%q) = %+v, want %s", text, found, want)
		}
	}
	if found := g.Found("API_KEY=sk-proj-4fGh82kLmN0pQrStUvWxYz12f3", []Source{{Path: ".env"}}); len(found) != 0 {
		t.Errorf("Found = %+v, want nothing the result names already", found)
	}
	if g.files.files.partial {
		t.Errorf("partial after reading 2 files")
	}
}

// What Found reads is bounded: past maxRootFiles private files it stops,
// and says so.
func TestGate_foundBounded(t *testing.T) {
	cwd := t.TempDir()
	for i := range maxRootFiles + 5 {
		dir := filepath.Join(cwd, fmt.Sprintf("d%03d", i))
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, ".env"), fmt.Appendf(nil, "KEY_%d=%s\n", i, value(i)), 0o600)
	}
	g, _ := New(Launch{Policy: Deny}, nil, cwd, []string{cwd})
	if found := g.Found("KEY_3="+value(3), nil); len(found) != 1 {
		t.Errorf("Found = %+v, want d003/.env", found)
	}
	if len(g.files.files.paths) != maxRootFiles || !g.files.files.partial {
		t.Errorf("%d files read, partial %v; want %d, partial", len(g.files.files.paths), g.files.files.partial, maxRootFiles)
	}
}

// value is a secret of its own for each i.
func value(i int) string { return fmt.Sprintf("%016x", uint64(i+1)*0x9E3779B97F4A7C15) }
