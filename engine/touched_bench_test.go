package engine

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// A snapshot of the roots (touched.go) costs about what a plain walk with
// a stat of each file does: BenchmarkSnapshot/walk is the reference, in
// the same run, over the same 5,000 files in 100 folders. Each shell call
// pays two snapshots.
func BenchmarkSnapshot(b *testing.B) {
	dir := b.TempDir()
	for d := range 100 {
		sub := filepath.Join(dir, fmt.Sprintf("d%03d", d))
		if err := os.Mkdir(sub, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := range 50 {
			if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%02d.go", f)), []byte("package x\n"), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("walk", func(b *testing.B) {
		for b.Loop() {
			n := 0
			_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, _ error) error {
				if _, err := d.Info(); err == nil {
					n++
				}
				return nil
			})
		}
	})
	b.Run("snapshot", func(b *testing.B) {
		for b.Loop() {
			if s := takeSnapshot([]string{dir}, ""); len(s.files) != 5000 {
				b.Fatalf("%d files", len(s.files))
			}
		}
	})
}
