// Package rootfs reaches the files under a session's roots on the local
// disk, every access through an os.Root (DESIGN §11): the one way coda's
// tools, workspaces and taint gate open a path the model named, and tell
// where a path really leads.
package rootfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// A Disk reaches the files under a workspace's roots on the local disk.
// Every access goes through an os.Root opened on the root that holds the
// path, so the check that a path stays inside and its use are one act: a
// file or folder swapped for a symlink after a tool checked its path cannot
// lead the access outside (DESIGN §11). Paths given to it are absolute.
//
// A path is first taken under the root it lies in as written; os.Root then
// follows symlinks that stay inside that root. A path that leaves it on the
// way (a symlink into another root, or an absolute symlink, which os.Root
// never follows) is taken again by its real location, under the root that
// holds that; a path whose real location is in no root is refused with
// ErrOutside.
type Disk struct {
	Roots []string
}

// ErrOutside is the error of an access whose path leads outside every root.
var ErrOutside = errors.New("the path leads outside the workspace")

// Stat is os.Stat under the roots.
func (d Disk) Stat(path string) (fs.FileInfo, error) {
	return under(d, "stat", path, func(r *os.Root, rel string) (fs.FileInfo, error) { return r.Stat(rel) })
}

// Open is os.Open under the roots.
func (d Disk) Open(path string) (*os.File, error) {
	return under(d, "open", path, func(r *os.Root, rel string) (*os.File, error) { return r.Open(rel) })
}

// A SizedFile is an open regular file and its size, for reading windows
// of it (what a workspace's OpenFile hands out).
type SizedFile struct {
	*os.File
	size int64
}

// Size is the file's size when it was opened.
func (f *SizedFile) Size() int64 { return f.size }

// OpenSized is Open of a file for reading windows of it; a directory is
// closed and refused.
func (d Disk) OpenSized(path string) (*SizedFile, error) {
	f, err := d.Open(path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if fi.IsDir() {
		f.Close()
		return nil, fmt.Errorf("%s is a directory", f.Name())
	}
	return &SizedFile{File: f, size: fi.Size()}, nil
}

// ReadFile is os.ReadFile under the roots.
func (d Disk) ReadFile(path string) ([]byte, error) {
	return under(d, "read", path, func(r *os.Root, rel string) ([]byte, error) { return r.ReadFile(rel) })
}

// WriteFile is os.WriteFile under the roots, making the missing parent
// directories first.
func (d Disk) WriteFile(path string, data []byte, perm fs.FileMode) error {
	_, err := under(d, "write", path, func(r *os.Root, rel string) (struct{}, error) {
		if err := r.MkdirAll(filepath.Dir(rel), 0o755); err != nil {
			return struct{}{}, err
		}
		return struct{}{}, r.WriteFile(rel, data, perm)
	})
	return err
}

// MkdirAll is os.MkdirAll under the roots.
func (d Disk) MkdirAll(path string) error {
	_, err := under(d, "mkdir", path, func(r *os.Root, rel string) (struct{}, error) {
		return struct{}{}, r.MkdirAll(rel, 0o755)
	})
	return err
}

// OpenRoot opens the directory at path as an os.Root of its own, for walking
// it; the caller closes it.
func (d Disk) OpenRoot(path string) (*os.Root, error) {
	return under(d, "open", path, func(r *os.Root, rel string) (*os.Root, error) { return r.OpenRoot(rel) })
}

// Inside reports where path really is (every symlink followed, also for a
// file that does not exist yet) and whether that lies inside one of the
// roots: what a tool checks before it uses a path, to tell the model why it
// may not.
func (d Disk) Inside(path string) (real string, inside bool, err error) {
	real, err = Real(filepath.Clean(path))
	if err != nil {
		return "", false, err
	}
	for _, root := range d.Roots {
		if Within(RealRoot(root), real) {
			return real, true, nil
		}
	}
	return real, false, nil
}

// under runs op on path through the os.Root of the root that holds it (see
// Disk).
func under[T any](d Disk, opName, path string, op func(r *os.Root, rel string) (T, error)) (T, error) {
	var zero T
	path = filepath.Clean(path)
	for _, root := range d.Roots {
		root = filepath.Clean(root)
		if !Within(root, path) {
			continue
		}
		v, err := inRoot(root, path, op)
		if !escapes(err) {
			return v, err
		}
		break
	}
	real, inside, err := d.Inside(path)
	if err != nil {
		return zero, &fs.PathError{Op: opName, Path: path, Err: UnwrapPath(err)}
	}
	if inside {
		for _, root := range d.Roots {
			if root = RealRoot(root); Within(root, real) {
				v, err := inRoot(root, real, op)
				if escapes(err) {
					break // a symlink changed under it since realPath looked
				}
				return v, err
			}
		}
	}
	return zero, &fs.PathError{Op: opName, Path: path, Err: ErrOutside}
}

// inRoot opens root and runs op on path, which lies under it.
func inRoot[T any](root, path string, op func(r *os.Root, rel string) (T, error)) (T, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		var zero T
		return zero, err
	}
	defer r.Close()
	rel, err := filepath.Rel(root, path)
	if err != nil {
		var zero T
		return zero, err
	}
	return op(r, rel)
}

// escapes reports whether err is os.Root's refusal of a path that leaves it.
// The os package does not export that error, so its text is matched.
func escapes(err error) bool {
	for ; err != nil; err = errors.Unwrap(err) {
		if err.Error() == "path escapes from parent" {
			return true
		}
	}
	return false
}

// UnwrapPath drops a *PathError's repetition of the path: what a message
// that names the path itself shows of the error.
func UnwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Real follows every symlink in p. Components that do not exist are kept
// as they are under their deepest existing parent's real path; a dangling
// symlink is followed to where it points, so a write through it cannot land
// outside the check.
func Real(p string) (string, error) { return realDepth(p, 0) }

func realDepth(p string, depth int) (string, error) {
	if depth > 64 {
		return "", errors.New("too many levels of symbolic links")
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r, nil
	}
	fi, err := os.Lstat(p)
	switch {
	case err == nil && fi.Mode()&fs.ModeSymlink != 0:
		target, err := os.Readlink(p)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(p), target)
		}
		return realDepth(filepath.Clean(target), depth+1)
	case err == nil:
		// It exists, yet its symlinks cannot be followed: refuse rather
		// than guess.
		_, err = filepath.EvalSymlinks(p)
		return "", err
	case errors.Is(err, fs.ErrNotExist):
		parent := filepath.Dir(p)
		if parent == p {
			return p, nil
		}
		rp, err := realDepth(parent, depth)
		if err != nil {
			return "", err
		}
		return filepath.Join(rp, filepath.Base(p)), nil
	default:
		return "", err
	}
}

// RealRoot is where root really is, every symlink followed; root, cleaned,
// when that cannot be told.
func RealRoot(root string) string {
	root = filepath.Clean(root)
	if r, err := filepath.EvalSymlinks(root); err == nil {
		return r
	}
	return root
}

// Within reports whether p is root or lies under it, by their names alone.
func Within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return false
	}
	return rel == "." || (rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)))
}
