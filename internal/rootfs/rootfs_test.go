package rootfs_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coda-acp/coda/internal/rootfs"
)

// diskDirs makes a workspace root, a second root and a directory outside
// both, with real (symlink-free) paths.
func diskDirs(t *testing.T) (root, extra, outside string) {
	t.Helper()
	var dirs [3]string
	for i := range dirs {
		d, err := filepath.EvalSymlinks(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		dirs[i] = d
	}
	return dirs[0], dirs[1], dirs[2]
}

func mustWrite(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustLink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// Every access stays under the roots: paths outside, and symlinks that
// lead outside, are refused at the moment of use; symlinks that stay
// inside (relative, absolute, or into another root) work.
func TestDisk(t *testing.T) {
	root, extra, outside := diskDirs(t)
	d := rootfs.Disk{Roots: []string{root, extra}}
	mustWrite(t, filepath.Join(root, "src", "a.go"), "package a\n")
	mustWrite(t, filepath.Join(extra, "notes.md"), "notes\n")
	mustWrite(t, filepath.Join(outside, "secret"), "secret\n")
	mustLink(t, "src", filepath.Join(root, "rel-in"))
	mustLink(t, filepath.Join(root, "src"), filepath.Join(root, "abs-in"))
	mustLink(t, extra, filepath.Join(root, "to-extra"))
	mustLink(t, outside, filepath.Join(root, "out-dir"))
	mustLink(t, filepath.Join(outside, "secret"), filepath.Join(root, "out-file"))
	mustLink(t, "../../"+filepath.Base(outside)+"/secret", filepath.Join(root, "src", "up-out"))

	for _, p := range []string{"src/a.go", "rel-in/a.go", "abs-in/a.go", "to-extra/notes.md"} {
		if b, err := d.ReadFile(filepath.Join(root, p)); err != nil || len(b) == 0 {
			t.Errorf("ReadFile(%s) = %q, %v", p, b, err)
		}
	}
	if _, err := d.ReadFile(filepath.Join(extra, "notes.md")); err != nil {
		t.Errorf("a file of the second root: %v", err)
	}
	for _, p := range []string{
		filepath.Join(root, "out-dir", "secret"), filepath.Join(root, "out-file"),
		filepath.Join(root, "src", "up-out"), filepath.Join(outside, "secret"), filepath.Join(root, "..", filepath.Base(outside), "secret"),
	} {
		if b, err := d.ReadFile(p); !errors.Is(err, rootfs.ErrOutside) {
			t.Errorf("ReadFile(%s) = %q, %v; want ErrOutside", p, b, err)
		}
		if _, err := d.Stat(p); !errors.Is(err, rootfs.ErrOutside) {
			t.Errorf("Stat(%s): %v; want ErrOutside", p, err)
		}
		if f, err := d.Open(p); !errors.Is(err, rootfs.ErrOutside) {
			f.Close()
			t.Errorf("Open(%s): %v; want ErrOutside", p, err)
		}
	}
	for _, p := range []string{filepath.Join(root, "out-dir", "new.txt"), filepath.Join(root, "out-dir", "new", "deep.txt"), filepath.Join(root, "out-file")} {
		if err := d.WriteFile(p, []byte("x"), 0o644); !errors.Is(err, rootfs.ErrOutside) {
			t.Errorf("WriteFile(%s): %v; want ErrOutside", p, err)
		}
	}
	if err := d.MkdirAll(filepath.Join(root, "out-dir", "made")); !errors.Is(err, rootfs.ErrOutside) {
		t.Errorf("MkdirAll through a symlink out: %v", err)
	}
	if r, err := d.OpenRoot(filepath.Join(root, "out-dir")); !errors.Is(err, rootfs.ErrOutside) {
		r.Close()
		t.Errorf("OpenRoot through a symlink out: %v", err)
	}
	assertUntouched(t, outside, "secret")

	// Writes make their parent directories, through symlinks that stay in.
	for _, p := range []string{"new/dir/b.txt", "rel-in/new/c.txt", "abs-in/d.txt", "to-extra/sub/e.txt"} {
		if err := d.WriteFile(filepath.Join(root, p), []byte(p), 0o644); err != nil {
			t.Errorf("WriteFile(%s): %v", p, err)
		}
		if b, err := os.ReadFile(filepath.Join(root, p)); err != nil || string(b) != p {
			t.Errorf("%s holds %q, %v", p, b, err)
		}
	}
}

// assertUntouched fails unless dir holds exactly the names given.
func assertUntouched(t *testing.T, dir string, names ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if strings.Join(got, ",") != strings.Join(names, ",") {
		t.Errorf("%s holds %v, want %v", dir, got, names)
	}
}
