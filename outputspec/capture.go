package outputspec

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/coda-acp/coda/internal/glob"
	"github.com/coda-acp/coda/internal/rootfs"
)

// Artifact capture by glob (DESIGN §19): `capture = ["reports/**/*.xml"]`
// on an output spec keeps the files under the session's roots that match,
// once an answer is accepted, as artifacts typed, hashed and sized as
// submitted ones are. Each walk goes through an os.Root (rootfs.Walk): no
// symlink leads it out of its root, and the folders
// rootfs.Pruned names (.git, node_modules, target, .venv, .cache, dist)
// are not entered; only folders a pattern can match under are. A file over
// MaxCaptureFile is skipped, and so is every file past MaxCaptureFiles or
// MaxCaptureBytes in all; each skip says why, for the run's record, the
// first maxCaptureSkipped of them by name and the rest by count.

// Capture's limits.
const (
	MaxCaptureFile  = 10 << 20 // a larger file is skipped
	MaxCaptureFiles = 100      // files kept from one answer's capture
	MaxCaptureBytes = 50 << 20 // their bytes together
	// maxCaptureWalk bounds the entries one capture walks.
	maxCaptureWalk = 100000
	// maxCaptureSkipped bounds the skips a capture names: a glob that
	// matches a tree of thousands of files past the caps is said in one
	// line more, not in thousands.
	maxCaptureSkipped = 100
)

// A Skipped is a file a capture matched and did not keep, and why.
type Skipped struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// checkCapture says why capture globs cannot be used, or nil.
func checkCapture(globs []string) error {
	for _, g := range globs {
		clean := strings.ReplaceAll(g, "\\", "/")
		switch {
		case filepath.IsAbs(g) || strings.HasPrefix(clean, "/"):
			return fmt.Errorf("output spec: capture %q is absolute: give a glob relative to the working directory", g)
		case clean == ".." || strings.HasPrefix(clean, "../") || strings.Contains(clean, "/../"):
			return fmt.Errorf("output spec: capture %q climbs out of the working directory", g)
		}
		if _, err := glob.Compile(g); err != nil {
			return fmt.Errorf("output spec: capture: %v", err)
		}
	}
	return nil
}

// Capture keeps the files under the session's roots that the contract's
// capture globs match: the working directory cwd, then each other root
// (the session's additional directories), a glob matched against a path
// relative to the root that holds it, as the taint gate's private globs
// are. A root inside one walked already is not walked again, and a walk
// does not go down into such a root. skip, when not nil, says why a file
// (its absolute path) is not to be kept, or "": a private file under the
// taint gate, a file a run replaced under overwrite_artifacts = false.
// Kept files are named by their path, slash-separated and relative to cwd
// (`../data/reports/x.xml` for a file of another root). The limits are
// the capture's, over all roots together.
func (c *Contract) Capture(cwd string, roots []string, skip func(abs string) string) (kept []Artifact, skipped []Skipped) {
	if len(c.spec.Capture) == 0 || cwd == "" {
		return nil, nil
	}
	cp := capturing{skip: skip, cwd: filepath.Clean(cwd)}
	for _, g := range c.spec.Capture {
		p, err := glob.Compile(g)
		if err != nil {
			continue // Validate refused it
		}
		cp.pats = append(cp.pats, p)
		cp.starts = append(cp.starts, literalDir(g))
	}
	all := []string{cp.cwd}
	for _, root := range roots {
		if root = filepath.Clean(root); !slices.Contains(all, root) {
			all = append(all, root)
		}
	}
	for _, root := range all {
		if slices.ContainsFunc(cp.walked, func(w string) bool { return rootfs.Within(w, root) }) {
			continue
		}
		if !cp.walk(root) {
			break
		}
		cp.walked = append(cp.walked, root)
	}
	if cp.unnamed > 0 {
		cp.skipped = append(cp.skipped, Skipped{"…", fmt.Sprintf("%d more files skipped: a capture names the first %d", cp.unnamed, maxCaptureSkipped)})
	}
	return cp.kept, cp.skipped
}

// capturing is a capture under way, over the roots one after the other.
type capturing struct {
	pats    []glob.Pattern
	starts  []string // the literal folders each glob starts with
	skip    func(abs string) string
	cwd     string
	walked  []string // the roots walked so far
	kept    []Artifact
	skipped []Skipped
	total   int64
	entries int
	unnamed int
}

// note says why the file at name was not kept.
func (cp *capturing) note(name, why string) {
	if len(cp.skipped) < maxCaptureSkipped {
		cp.skipped = append(cp.skipped, Skipped{name, why})
	} else {
		cp.unnamed++
	}
}

// name is how the file rel under root is named: slash-separated, relative
// to the working directory.
func (cp *capturing) name(root, rel string) string {
	if root == cp.cwd {
		return rel
	}
	if r, err := filepath.Rel(cp.cwd, filepath.Join(root, filepath.FromSlash(rel))); err == nil {
		return filepath.ToSlash(r)
	}
	return filepath.ToSlash(filepath.Join(root, filepath.FromSlash(rel)))
}

// walk keeps what root holds, through an os.Root; it reports false when
// the capture is to stop (its walk's bound reached).
func (cp *capturing) walk(root string) bool {
	what := "the working directory"
	if root != cp.cwd {
		what = "the root " + root
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		cp.note(cp.name(root, "."), what+" cannot be read: "+unwrapPath(err))
		return true
	}
	defer r.Close()
	more := true
	err = rootfs.Walk(root, func(rel string, d fs.DirEntry) error {
		name := cp.name(root, rel)
		if cp.entries++; cp.entries > maxCaptureWalk {
			cp.skipped = append(cp.skipped, Skipped{name, fmt.Sprintf("the capture stopped here: it walks at most %d entries", maxCaptureWalk)})
			more = false
			return rootfs.ErrStop
		}
		if d.IsDir() {
			abs := filepath.Join(root, filepath.FromSlash(rel))
			if !underAny(rel, cp.starts) || slices.Contains(cp.walked, abs) {
				return fs.SkipDir
			}
			return nil
		}
		if !matchesAny(rel, cp.pats) {
			return nil
		}
		info, err := r.Stat(filepath.FromSlash(rel)) // through a link that stays inside, refused otherwise
		switch {
		case err != nil && d.Type()&fs.ModeSymlink != 0:
			cp.note(name, "a symbolic link that leads outside "+what+", or nowhere")
			return nil
		case err != nil:
			cp.note(name, "it cannot be read: "+unwrapPath(err))
			return nil
		case !info.Mode().IsRegular():
			return nil // a folder through a link, a socket: not a file to keep
		case info.Size() > MaxCaptureFile:
			cp.note(name, fmt.Sprintf("%d bytes, over the %d MB a captured file may be", info.Size(), MaxCaptureFile>>20))
			return nil
		case len(cp.kept) >= MaxCaptureFiles:
			cp.note(name, fmt.Sprintf("past the %d files a capture keeps", MaxCaptureFiles))
			return nil
		case cp.total+info.Size() > MaxCaptureBytes:
			cp.note(name, fmt.Sprintf("past the %d MB a capture keeps in all", MaxCaptureBytes>>20))
			return nil
		}
		if cp.skip != nil {
			if why := cp.skip(filepath.Join(root, filepath.FromSlash(rel))); why != "" {
				cp.note(name, why)
				return nil
			}
		}
		a := Artifact{Name: name, Path: name}
		if _, err := describe(r, filepath.FromSlash(rel), &a); err != nil {
			cp.note(name, "it cannot be read: "+unwrapPath(err))
			return nil
		}
		cp.total += a.Size
		cp.kept = append(cp.kept, a)
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		cp.note(cp.name(root, "."), what+" cannot be walked: "+unwrapPath(err))
	}
	return more
}

// literalDir is the folder a glob's literal leading segments name ("" when
// its first segment is a wildcard, or it names a file at any depth).
func literalDir(g string) string {
	g = strings.TrimPrefix(strings.Trim(strings.ReplaceAll(g, "\\", "/"), "/"), "./")
	if !strings.Contains(g, "/") {
		return "" // a bare name matches at any depth
	}
	var lit []string
	segs := strings.Split(g, "/")
	for _, s := range segs[:len(segs)-1] {
		if strings.ContainsAny(s, "*?[\\") {
			break
		}
		lit = append(lit, s)
	}
	return path.Join(lit...)
}

// underAny reports whether a capture can match under the folder rel: it
// is on the way to, or inside, one of the globs' literal folders.
func underAny(rel string, starts []string) bool {
	for _, s := range starts {
		if s == "" || rel == s || strings.HasPrefix(rel, s+"/") || strings.HasPrefix(s, rel+"/") {
			return true
		}
	}
	return false
}

func matchesAny(rel string, pats []glob.Pattern) bool {
	for _, p := range pats {
		if p.Match(rel) {
			return true
		}
	}
	return false
}
