package rootfs

import (
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
