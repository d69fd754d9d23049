package rootfs

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
)

// Walk reports what is under a root, in order, but for the pruned
// folders; a symlink is reported, never followed; SkipDir skips a folder.
func TestWalk(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"a/b.txt", "a/skip/c.txt", "node_modules/x.js", "src/.git/HEAD", "src/main.go", "dist/out.js"} {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"a", "a/b.txt", "a/skip", "src", "src/main.go"}
	if runtime.GOOS != "windows" {
		if err := os.Symlink(t.TempDir(), filepath.Join(dir, "src", "outside")); err != nil {
			t.Fatal(err)
		}
		want = append(want, "src/outside")
	}
	var got []string
	err := Walk(dir, func(rel string, d fs.DirEntry) error {
		got = append(got, rel)
		if rel == "a/skip" {
			return fs.SkipDir
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("walked %q, want %q", got, want)
	}
	n := 0
	if err := Walk(dir, func(string, fs.DirEntry) error { n++; return ErrStop }); err != nil || n != 1 {
		t.Errorf("ErrStop: %v after %d entries", err, n)
	}
}

// WalkNames reports what Walk does, in the same order, with the same
// types, and stops, skips and prunes as it does.
func TestWalkNames_asWalk(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"a/b/c.txt", "a/.env", "node_modules/x/.env", "z.pem", "d/e/f/g.key", ".git/config"} {
		p := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("/etc", filepath.Join(dir, "a", "out")); err != nil {
		t.Skip(err)
	}
	list := func(walk func(string, func(string, fs.DirEntry) error) error, skip string) []string {
		var got []string
		if err := walk(dir, func(rel string, d fs.DirEntry) error {
			got = append(got, fmt.Sprintf("%s %v", rel, d.Type()))
			if rel == skip {
				return fs.SkipDir
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return got
	}
	for _, skip := range []string{"", "a/b", "d"} {
		want, got := list(Walk, skip), list(WalkNames, skip)
		if !slices.Equal(got, want) {
			t.Errorf("skipping %q: WalkNames =\n%q\nWalk =\n%q", skip, got, want)
		}
	}
}
