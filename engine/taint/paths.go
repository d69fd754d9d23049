package taint

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/coda-acp/coda/internal/glob"
	"github.com/coda-acp/coda/internal/rootfs"
)

// DefaultPrivate are the private paths of DESIGN §13, used unless
// [taint] or [agent.taint] says `private = [...]`.
var DefaultPrivate = []string{"**/.env", "**/.env.*", "**/*.pem", "**/*.key", "**/id_rsa*", "**/secrets/**"}

// foldCase says whether private paths match case-insensitively: on macOS and
// Windows, whose file systems usually are, `.ENV` opens `.env`. Decided by
// the platform rather than by probing each root: a probe needs a name with
// letters to flip and can only speak for the directory it looked at.
var foldCase = runtime.GOOS == "darwin" || runtime.GOOS == "windows"

// privatePaths tells which paths are private: globs matched against a path
// relative to the session's root that holds it (or, outside every root,
// against the whole path), for the path as named and for its real location,
// every symlink followed, so that neither a link (`notes.txt -> .env`) nor a
// `..` (`src/../.env`) dodges a glob; and a hard link to a private file is
// the same file, so private too.
type privatePaths struct {
	globs []glob.Pattern
	fold  bool
	cwd   string
	roots []string // as given, cleaned, then their real locations
	// key is the globs and roots as given: what an Index was built for.
	key string
}

func newPrivatePaths(patterns []string, cwd string, roots []string, fold bool) (*privatePaths, error) {
	p := &privatePaths{fold: fold, cwd: filepath.Clean(cwd), key: strings.Join(patterns, "\x00") + "\x01" + strings.Join(roots, "\x00")}
	for _, pat := range patterns {
		if fold {
			pat = strings.ToLower(pat)
		}
		g, err := glob.Compile(pat)
		if err != nil {
			return nil, err
		}
		p.globs = append(p.globs, g)
	}
	for _, r := range roots {
		p.roots = append(p.roots, filepath.Clean(r))
	}
	for _, r := range roots {
		if real := rootfs.RealRoot(r); real != filepath.Clean(r) {
			p.roots = append(p.roots, real)
		}
	}
	return p, nil
}

// CheckPrivate says why a private-path glob cannot be used, or nil.
func CheckPrivate(patterns []string) error {
	for _, pat := range patterns {
		if _, err := glob.Compile(pat); err != nil {
			return err
		}
	}
	return nil
}

// private reports whether the file at path is private, and its name for
// messages: relative to the working directory when it lies under it, else
// absolute. A relative path is taken against the working directory.
func (p *privatePaths) private(path string) (name string, ok bool) {
	raw := path
	if !filepath.IsAbs(raw) {
		raw = p.cwd + string(filepath.Separator) + raw
	}
	path = filepath.Clean(raw)
	name = p.name(path)
	if p.matches(path) {
		return name, true
	}
	// Where the path really leads, taken as cleaned (what a tool opens)
	// and as written (a `..` after a symlink climbs out of its target).
	for _, q := range []string{path, raw} {
		if real, err := rootfs.Real(q); err == nil && real != path && p.matches(real) {
			return name, true
		}
	}
	return name, p.hardLinked(path)
}

// maxLinkSearch bounds the entries hardLinked looks at, per root.
const maxLinkSearch = 20000

// hardLinked reports whether the file at path is a private file under
// another name: a hard link is the same file (`ln .env notes.txt`), which
// no glob of its name can tell. Only a file with more than one link is
// looked for, among the private files under the roots.
func (p *privatePaths) hardLinked(path string) bool {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() || linkCount(fi) < 2 {
		return false
	}
	for _, root := range p.roots {
		seen, found := 0, false
		_ = rootfs.Walk(root, func(rel string, d fs.DirEntry) error {
			if seen++; seen > maxLinkSearch {
				return rootfs.ErrStop
			}
			if !d.Type().IsRegular() || !p.match(rel) {
				return nil
			}
			if other, err := os.Stat(filepath.Join(root, filepath.FromSlash(rel))); err == nil && os.SameFile(fi, other) {
				found = true
				return rootfs.ErrStop
			}
			return nil
		})
		if found {
			return true
		}
	}
	return false
}

// matches matches a clean absolute path: relative to each root that holds
// it, or whole when none does.
func (p *privatePaths) matches(path string) bool {
	under := false
	for _, root := range p.roots {
		if !rootfs.Within(root, path) {
			continue
		}
		under = true
		if rel, err := filepath.Rel(root, path); err == nil && p.match(rel) {
			return true
		}
	}
	if under {
		return false
	}
	rel := strings.TrimPrefix(path, filepath.VolumeName(path))
	return p.match(strings.TrimLeft(rel, `/\`))
}

func (p *privatePaths) match(rel string) bool {
	rel = filepath.ToSlash(rel)
	if p.fold {
		rel = strings.ToLower(rel)
	}
	for _, g := range p.globs {
		if g.Match(rel) {
			return true
		}
	}
	return false
}

// name is how messages name a path: relative to the working directory when
// it lies under it, else relative to the additional root that holds it,
// after that root's name, else absolute.
func (p *privatePaths) name(path string) string {
	if rootfs.Within(p.cwd, path) {
		if rel, err := filepath.Rel(p.cwd, path); err == nil {
			return filepath.ToSlash(rel)
		}
	}
	for _, root := range p.roots {
		if rootfs.Within(root, path) {
			if rel, err := filepath.Rel(root, path); err == nil {
				return filepath.ToSlash(filepath.Join(filepath.Base(root), rel))
			}
		}
	}
	return path
}
