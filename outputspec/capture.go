package outputspec

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/coda-acp/coda/internal/glob"
	"github.com/coda-acp/coda/internal/rootfs"
)

// Artifact capture by glob (DESIGN §19): `capture = ["reports/**/*.xml"]`
// on an output spec keeps the files under the working directory that
// match, once an answer is accepted, as artifacts typed, hashed and sized
// as submitted ones are. The walk goes through an os.Root (rootfs.Walk):
// no symlink leads it out of the working directory, and the folders
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

// Capture keeps the files under root (the working directory) that the
// contract's capture globs match. skip, when not nil, says why a file
// (its absolute path) is not to be kept, or "": a private file under the
// taint gate, a file a run replaced under overwrite_artifacts = false.
// Kept files are named by their path, slash-separated and relative to
// root.
func (c *Contract) Capture(root string, skip func(abs string) string) (kept []Artifact, skipped []Skipped) {
	if len(c.spec.Capture) == 0 || root == "" {
		return nil, nil
	}
	var pats []glob.Pattern
	var starts []string // the literal folders each glob starts with
	for _, g := range c.spec.Capture {
		p, err := glob.Compile(g)
		if err != nil {
			continue // Validate refused it
		}
		pats = append(pats, p)
		starts = append(starts, literalDir(g))
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, []Skipped{{Path: ".", Reason: "the working directory cannot be read: " + unwrapPath(err)}}
	}
	defer r.Close()
	var total int64
	walked, unnamed := 0, 0
	note := func(rel, why string) {
		if len(skipped) < maxCaptureSkipped {
			skipped = append(skipped, Skipped{rel, why})
		} else {
			unnamed++
		}
	}
	err = rootfs.Walk(root, func(rel string, d fs.DirEntry) error {
		if walked++; walked > maxCaptureWalk {
			skipped = append(skipped, Skipped{rel, fmt.Sprintf("the capture stopped here: it walks at most %d entries", maxCaptureWalk)})
			return rootfs.ErrStop
		}
		if d.IsDir() {
			if !underAny(rel, starts) {
				return fs.SkipDir
			}
			return nil
		}
		if !matchesAny(rel, pats) {
			return nil
		}
		info, err := r.Stat(filepath.FromSlash(rel)) // through a link that stays inside, refused otherwise
		switch {
		case err != nil && d.Type()&fs.ModeSymlink != 0:
			note(rel, "a symbolic link that leads outside the working directory, or nowhere")
			return nil
		case err != nil:
			note(rel, "it cannot be read: "+unwrapPath(err))
			return nil
		case !info.Mode().IsRegular():
			return nil // a folder through a link, a socket: not a file to keep
		case info.Size() > MaxCaptureFile:
			note(rel, fmt.Sprintf("%d bytes, over the %d MB a captured file may be", info.Size(), MaxCaptureFile>>20))
			return nil
		case len(kept) >= MaxCaptureFiles:
			note(rel, fmt.Sprintf("past the %d files a capture keeps", MaxCaptureFiles))
			return nil
		case total+info.Size() > MaxCaptureBytes:
			note(rel, fmt.Sprintf("past the %d MB a capture keeps in all", MaxCaptureBytes>>20))
			return nil
		}
		if skip != nil {
			if why := skip(filepath.Join(root, filepath.FromSlash(rel))); why != "" {
				note(rel, why)
				return nil
			}
		}
		a := Artifact{Name: rel, Path: rel}
		if _, err := describe(r, filepath.FromSlash(rel), &a); err != nil {
			note(rel, "it cannot be read: "+unwrapPath(err))
			return nil
		}
		total += a.Size
		kept = append(kept, a)
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		note(".", "the working directory cannot be walked: "+unwrapPath(err))
	}
	if unnamed > 0 {
		skipped = append(skipped, Skipped{"…", fmt.Sprintf("%d more files skipped: a capture names the first %d", unnamed, maxCaptureSkipped)})
	}
	return kept, skipped
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
