package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/coda-acp/coda/engine"
)

// resolve turns a path the model gave into an absolute, clean path that is
// confined to the workspace: relative paths resolve against Cwd, and the
// path's real location (every symlink followed, also for a file that does not
// exist yet) must lie inside one of Roots. The returned path is the one to
// operate on; it contains no "..".
func resolve(ws engine.Workspace, p string) (string, error) {
	if strings.TrimSpace(p) == "" {
		return "", errors.New("the path is empty")
	}
	if strings.ContainsRune(p, 0) {
		return "", errors.New("the path contains a NUL byte")
	}
	abs := p
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(ws.Cwd(), abs)
	}
	abs = filepath.Clean(abs)
	real, err := realPath(abs, 0)
	if err != nil {
		return "", fmt.Errorf("cannot resolve %s: %w", p, unwrapPathError(err))
	}
	for _, root := range ws.Roots() {
		if within(rootReal(root), real) {
			return abs, nil
		}
	}
	how := "is outside"
	if real != abs {
		how = fmt.Sprintf("resolves to %s, which is outside", real)
	}
	return "", fmt.Errorf("%s %s the workspace (%s); only files under it can be used", p, how, strings.Join(ws.Roots(), ", "))
}

// realPath follows every symlink in p. Components that do not exist are kept
// as they are under their deepest existing parent's real path; a dangling
// symlink is followed to where it points, so a write through it cannot land
// outside the check.
func realPath(p string, depth int) (string, error) {
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
		return realPath(filepath.Clean(target), depth+1)
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
		rp, err := realPath(parent, depth)
		if err != nil {
			return "", err
		}
		return filepath.Join(rp, filepath.Base(p)), nil
	default:
		return "", err
	}
}

func rootReal(root string) string {
	root = filepath.Clean(root)
	if r, err := filepath.EvalSymlinks(root); err == nil {
		return r
	}
	return root
}

// within reports whether p is root or lies under it.
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return false
	}
	return rel == "." || (rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)))
}

// display names a resolved path for the model: relative to Cwd when it lies
// under it, else absolute.
func display(ws engine.Workspace, abs string) string {
	cwd := filepath.Clean(ws.Cwd())
	if rel, err := filepath.Rel(cwd, abs); err == nil && within(cwd, abs) {
		return filepath.ToSlash(rel)
	}
	return abs
}

// unwrapPathError drops the *PathError's repetition of the path.
func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// describeErr words a file error for the model.
func describeErr(shown string, err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Sprintf("%s does not exist", shown)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Sprintf("%s cannot be accessed: permission denied", shown)
	default:
		return fmt.Sprintf("%s: %v", shown, unwrapPathError(err))
	}
}
