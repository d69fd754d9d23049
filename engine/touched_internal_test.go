package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// The build output the snapshot walks has a budget of its own: a dist
// past it (here 100 entries) leaves the rest of the tree (after it, in the
// walk's order) seen, and what it left unseen is not taken for removed or
// made.
func TestSnapshot_builtBudget(t *testing.T) {
	dir := t.TempDir()
	for i := range 110 {
		if i%10 == 0 {
			os.MkdirAll(filepath.Join(dir, "dist", fmt.Sprintf("d%02d", i/10)), 0o755)
		}
		os.WriteFile(filepath.Join(dir, "dist", fmt.Sprintf("d%02d", i/10), fmt.Sprintf("f%05d", i)), nil, 0o644)
	}
	os.WriteFile(filepath.Join(dir, "src.go"), []byte("package x"), 0o644)
	snap := func() *snapshot { return snapshotWithin([]string{dir}, "", 1000, 100) }
	before := snap()
	if !before.builtPartial || before.partial {
		t.Fatalf("builtPartial %v, partial %v; want only the build output cut short", before.builtPartial, before.partial)
	}
	if _, ok := before.files[filepath.Join(dir, "src.go")]; !ok {
		t.Fatalf("src.go, after a dist past its budget, was not seen")
	}
	os.WriteFile(filepath.Join(dir, "src.go"), []byte("package x // changed"), 0o644)
	os.WriteFile(filepath.Join(dir, "new.go"), nil, 0o644)
	touched, _ := before.changes(snap())
	if want := []string{filepath.Join(dir, "new.go"), filepath.Join(dir, "src.go")}; fmt.Sprint(touched) != fmt.Sprint(want) {
		t.Errorf("touched %q, want %q", touched, want)
	}
}
