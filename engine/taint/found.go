package taint

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/coda-acp/coda/internal/rootfs"
)

// A tool result that names no private file may still carry one's content:
// `cat .e''nv`, `grep -r API_KEY .`, an MCP server that read it (DESIGN
// §13: command output that carries private content is a source). So the
// gate knows what the private files under the session's roots hold (their
// secrets, as privateLines remembers them), read once a turn the first
// time a result is looked at, within bounds; a result that carries a
// secret of one brings that file, as reading it does (Found), and so does
// an artifact that carries one (foundFiles: `cp "$(printf .en)v" out.txt`
// prints nothing).

// rootFiles is what the private files under the roots hold.
type rootFiles struct {
	mu    sync.Mutex // lines, in find
	lines privateLines
	paths []string // the files read, absolute: lines' sources
	// partial says a bound stopped the reading: some files are not known.
	partial bool
	entries int // entries walked
	// dirs are the folders walked, and stamps the private files found,
	// by absolute path: what an Index looks at to tell that nothing
	// changed.
	dirs   map[string]time.Time
	stamps map[string]stamp
	// listed are the private files found, each its root's real path and
	// its path under it, slash-separated: what a kept listing names
	// (kept.go).
	listed [][2]string
}

// A stamp is what a stat says of a file that changes when it does.
type stamp struct {
	size int64
	mod  time.Time
}

// maxRootEntries bounds the entries rootFiles walks, over all roots (a
// var: tests lower it).
var maxRootEntries = 50000

// Bounds on what rootFiles reads.
const (
	maxRootFiles     = 256     // private files read
	maxRootFileBytes = 1 << 20 // of each
	maxRootBytes     = 8 << 20 // of all
)

// Found are the private files under the session's roots that text (a
// tool's result) carries a secret of, but for those known names (its
// Sources already), as Sources for Read: the file whole. A result that
// carries only an ordinary line of a private file (`PORT=5432`) brings
// nothing.
func (g *Gate) Found(text string, known []Source) []Source {
	if g == nil || text == "" {
		return nil
	}
	f := g.rootFiles()
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sources(f.lines.find(text), known, g.abs)
}

// foundFiles is Found of what files hold (a call's artifacts), each read
// a chunk at a time and then wound back to its start for the gate to read
// again; one that cannot be wound back is not looked in.
func (g *Gate) foundFiles(files []io.Reader) []Source {
	var out []Source
	for _, r := range files {
		s, ok := r.(io.Seeker)
		if !ok {
			continue
		}
		f := g.rootFiles()
		f.mu.Lock()
		var found []uint32
		_ = f.lines.findStream(r, func(line uint32) { found = append(found, line) })
		out = append(out, f.sources(found, out, g.abs)...)
		f.mu.Unlock()
		s.Seek(0, io.SeekStart)
	}
	return out
}

// rootFiles is what the private files under the roots hold, read the
// first time it is asked for.
func (g *Gate) rootFiles() *rootFiles { return g.files.get(g.paths) }

// sources are the files that hold the lines found that hold a secret,
// each once, but for those known names already (abs makes their paths
// absolute). f.mu is held.
func (f *rootFiles) sources(found []uint32, known []Source, abs func(string) string) []Source {
	var out []Source
	for _, i := range found {
		l := f.lines.line(i)
		p := f.paths[l.source]
		if !l.secret || slices.ContainsFunc(out, func(s Source) bool { return s.Path == p }) ||
			slices.ContainsFunc(known, func(s Source) bool { return abs(s.Path) == p }) {
			continue
		}
		out = append(out, Source{Path: p, Named: true})
	}
	return out
}

// read takes in the private files under the roots, each once (a root
// inside another, or given twice, is walked once), through an os.Root,
// without following a symlink and without a stat of each entry
// (rootfs.WalkNames): only the folders and the private files are
// stat'ed, for an Index to tell later that nothing changed.
func (f *rootFiles) read(paths *privatePaths) {
	f.dirs, f.stamps = map[string]time.Time{}, map[string]stamp{}
	var reals []string
	for _, root := range paths.roots {
		reals = append(reals, rootfs.RealRoot(root))
	}
	slices.SortFunc(reals, func(a, b string) int { return len(a) - len(b) }) // an outer root first
	total := 0
	var walked []string
	for _, real := range reals {
		if slices.ContainsFunc(walked, func(w string) bool { return rootfs.Within(w, real) }) {
			continue
		}
		walked = append(walked, real)
		r, err := os.OpenRoot(real)
		if err != nil {
			continue
		}
		if fi, err := r.Lstat("."); err == nil {
			f.dirs[real] = fi.ModTime()
		}
		_ = rootfs.WalkNames(real, func(rel string, d fs.DirEntry) error {
			if f.entries++; f.entries > maxRootEntries || len(f.paths) >= maxRootFiles || total >= maxRootBytes {
				f.partial = true
				return rootfs.ErrStop
			}
			if d.IsDir() {
				if fi, err := r.Lstat(filepath.FromSlash(rel)); err == nil {
					f.dirs[filepath.Join(real, filepath.FromSlash(rel))] = fi.ModTime()
				}
				return nil
			}
			if !d.Type().IsRegular() || !paths.match(rel) {
				return nil
			}
			abs := filepath.Join(real, filepath.FromSlash(rel))
			text, st, err := readRegular(r, filepath.FromSlash(rel), min(maxRootFileBytes, maxRootBytes-total))
			if err != nil {
				return nil
			}
			f.stamps[abs] = st
			f.listed = append(f.listed, [2]string{real, rel})
			if len(text) == 0 {
				return nil
			}
			total += len(text)
			f.lines.add(string(text), len(f.paths))
			f.paths = append(f.paths, abs)
			if f.lines.full {
				f.partial = true
				return rootfs.ErrStop
			}
			return nil
		})
		r.Close()
	}
}

// readRegular reads at most max bytes of the regular file rel under r,
// and says what its stat said.
func readRegular(r *os.Root, rel string, max int) ([]byte, stamp, error) {
	file, err := r.OpenFile(rel, os.O_RDONLY|openFlags, 0)
	if err != nil {
		return nil, stamp{}, err
	}
	defer file.Close()
	fi, err := file.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil, stamp{}, fs.ErrInvalid
	}
	b, err := io.ReadAll(io.LimitReader(file, int64(max)))
	return b, stamp{size: fi.Size(), mod: fi.ModTime()}, err
}
