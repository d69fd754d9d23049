package outputspec

import (
	"os"
	"path/filepath"
	"testing"
)

// An artifact is read through an os.Root of the working directory: a file
// swapped for a symlink to outside after its path was resolved is not read
// (its size, hash and type would tell what lies outside).
func TestDescribe_throughRoot(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.md"), []byte("# secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "in.md"), []byte("# in\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(root, "report.md")); err != nil {
		t.Fatal(err)
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var a Artifact
	if _, err := describe(r, "report.md", &a); err == nil {
		t.Errorf("a file outside was described: %+v", a)
	}
	if _, err := describe(r, "in.md", &a); err != nil || a.Size != 5 || a.MimeType != "text/markdown" {
		t.Errorf("in.md: %+v, %v", a, err)
	}
}
