package local_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine/local"
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

// A folder swapped for a symlink to outside after a path was checked
// cannot lead a write outside: LocalWorkspace writes through the roots.
func TestWorkspace_WriteTextFile_swapped(t *testing.T) {
	root, _, outside := diskDirs(t)
	w := &local.Workspace{Dir: root}
	path := filepath.Join(root, "dir", "x.txt")
	mustWrite(t, path, "old")
	if err := os.Rename(filepath.Join(root, "dir"), filepath.Join(root, "dir.moved")); err != nil {
		t.Fatal(err)
	}
	mustLink(t, outside, filepath.Join(root, "dir"))
	err := w.WriteTextFile(context.Background(), path, "new")
	if !errors.Is(err, rootfs.ErrOutside) {
		t.Errorf("WriteTextFile through a swapped folder: %v", err)
	}
	assertUntouched(t, outside)
	if _, err := w.ReadTextFile(context.Background(), path); !errors.Is(err, rootfs.ErrOutside) {
		t.Errorf("ReadTextFile through a swapped folder: %v", err)
	}
	if _, err := w.OpenFile(context.Background(), path); !errors.Is(err, rootfs.ErrOutside) {
		t.Errorf("OpenFile through a swapped folder: %v", err)
	}
}
