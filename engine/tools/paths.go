package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/internal/rootfs"
)

// resolve turns a path the model gave into an absolute, clean path that is
// confined to the workspace: relative paths resolve against Cwd, and the
// path's real location (every symlink followed, also for a file that does not
// exist yet) must lie inside one of Roots. The returned path is the one to
// operate on; it contains no "..". The check is for the model's sake, to say
// why a path is refused: the access itself goes through disk(ws), which
// holds to the roots at the moment of use.
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
	real, inside, err := disk(ws).Inside(abs)
	if err != nil {
		return "", fmt.Errorf("cannot resolve %s: %w", p, rootfs.UnwrapPath(err))
	}
	if inside {
		return abs, nil
	}
	how := "is outside"
	if real != abs {
		how = fmt.Sprintf("resolves to %s, which is outside", real)
	}
	return "", fmt.Errorf("%s %s the workspace (%s); only files under it can be used", p, how, strings.Join(ws.Roots(), ", "))
}

// target is the workspace a path the model gave lies in, and the path
// resolved there: run:PATH names a file of the run's own record (DESIGN
// §15), read only through Call.RunFiles and confined to it; any other
// path, the session's workspace (resolve).
func target(call *engine.Call, p string) (engine.Workspace, string, error) {
	rest, isRun := strings.CutPrefix(p, engine.RunPrefix)
	if !isRun {
		path, err := resolve(call.Workspace, p)
		return call.Workspace, path, err
	}
	if call.RunDir == "" {
		return nil, "", fmt.Errorf("%s: this run keeps no record (coda runs without a state directory), so there is nothing under run: to read", p)
	}
	ws := call.RunFiles()
	rel := filepath.FromSlash(strings.TrimSpace(rest))
	if rel == "" {
		rel = "."
	}
	if !filepath.IsLocal(rel) && rel != "." {
		return nil, "", fmt.Errorf("%s is outside the run's record: a run: path is relative to it, such as run:stages or run:artifacts", p)
	}
	path, err := resolve(ws, rel)
	if err != nil {
		return nil, "", fmt.Errorf("%s leads outside the run's record", p)
	}
	return ws, path, nil
}

// writable is resolve for a path a tool would change: run:PATH names a
// file of the run's own record, which is read-only.
func writable(ws engine.Workspace, p string) (string, error) {
	if strings.HasPrefix(p, engine.RunPrefix) {
		return "", fmt.Errorf("%s is in the run's own record, which is read-only", p)
	}
	return resolve(ws, p)
}

// located is the editor's location for a path a tool used: none for a file
// of the run's record, which is coda's, not the project's.
func located(ws engine.Workspace, abs string) []engine.Location {
	if engine.IsRunFiles(ws) {
		return nil
	}
	return []engine.Location{{Path: abs}}
}

// disk is the local disk under the workspace's roots: every file a tool
// reads or lists on disk is reached through it.
func disk(ws engine.Workspace) rootfs.Disk { return rootfs.Disk{Roots: ws.Roots()} }

// display names a resolved path for the model: relative to Cwd when it lies
// under it, else absolute.
func display(ws engine.Workspace, abs string) string {
	cwd := filepath.Clean(ws.Cwd())
	if engine.IsRunFiles(ws) {
		rel, _ := filepath.Rel(cwd, abs)
		if rel == "." {
			rel = ""
		}
		return engine.RunPrefix + filepath.ToSlash(rel)
	}
	if rel, err := filepath.Rel(cwd, abs); err == nil && rootfs.Within(cwd, abs) {
		return filepath.ToSlash(rel)
	}
	return abs
}

// describeErr words a file error for the model.
func describeErr(shown string, err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Sprintf("%s does not exist", shown)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Sprintf("%s cannot be accessed: permission denied", shown)
	default:
		return fmt.Sprintf("%s: %v", shown, rootfs.UnwrapPath(err))
	}
}
