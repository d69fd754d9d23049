package rootfs

import (
	"errors"
	"io/fs"
	"os"
	"slices"
)

// Pruned are the folders a walk of a root skips (Walk: artifact capture,
// the taint gate's look for private files; the snapshot of files touched
// skips all but the build output): version control, dependencies, caches
// and build output, which an answer is seldom about and which would crowd
// out what it is about.
var Pruned = []string{".git", "node_modules", "target", ".venv", ".cache", "dist"}

// ErrStop, returned by a Walk's fn, ends the walk without an error.
var ErrStop = errors.New("stop the walk")

// Walk calls fn with every entry under root but the folders Pruned names,
// in lexical order, through an os.Root: rel is slash-separated and
// relative to root. Symlinks are reported as they are, never followed, so
// a walk never leaves the root. fn returning fs.SkipDir for a folder
// skips it; another error ends the walk (ErrStop without an error). A
// folder that cannot be read is skipped.
func Walk(root string, fn func(rel string, d fs.DirEntry) error) error {
	return WalkExcept(root, Pruned, fn)
}

// WalkExcept is Walk with the folders pruned names skipped instead of
// Pruned's: the snapshot of files touched walks the build output that
// Walk skips (engine/touched.go).
func WalkExcept(root string, pruned []string, fn func(rel string, d fs.DirEntry) error) error {
	r, err := os.OpenRoot(root)
	if err != nil {
		return err
	}
	defer r.Close()
	err = fs.WalkDir(r.FS(), ".", func(rel string, d fs.DirEntry, err error) error {
		switch {
		case err != nil && rel == ".":
			return err
		case err != nil:
			return nil // unreadable: skipped (WalkDir then skips the folder)
		case rel == ".":
			return nil
		case d.IsDir() && slices.Contains(pruned, d.Name()):
			return fs.SkipDir
		}
		return fn(rel, d)
	})
	if errors.Is(err, ErrStop) {
		return nil
	}
	return err
}
