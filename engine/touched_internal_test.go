package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
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
	snap := func() *snapshot { return snapshotWithin([]string{dir}, "", 1000, 100, time.Now) }
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

// A snapshot is bounded in time as well as in entries: on a clock that
// runs a second per look (a slow file system, told by a fake clock, not
// by this machine's speed), it stops past maxSnapshotTime, partial, and
// what it did not reach is not taken for removed.
func TestSnapshot_timeBudget(t *testing.T) {
	dir := t.TempDir()
	for i := range 1000 {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%04d", i)), nil, 0o644)
	}
	looks := 0
	slow := func() time.Time {
		looks++
		return time.Unix(0, 0).Add(time.Duration(looks) * time.Second)
	}
	snap := snapshotWithin([]string{dir}, "", 20000, 100, slow)
	if !snap.partial || len(snap.files) >= 1000 {
		t.Fatalf("partial %v with %d of 1000 files, want the walk stopped by its time", snap.partial, len(snap.files))
	}
	if want := int(maxSnapshotTime/time.Second) + 2; looks > want {
		t.Errorf("the clock was looked at %d times, want at most %d", looks, want)
	}
	whole := snapshotWithin([]string{dir}, "", 20000, 100, time.Now)
	if touched, _ := snap.changes(whole); len(touched) != 0 {
		t.Errorf("files a partial snapshot did not reach were taken as made: %d", len(touched))
	}
	if touched, _ := whole.changes(snap); len(touched) != 0 {
		t.Errorf("files a partial snapshot did not reach were taken as removed: %d", len(touched))
	}
}
