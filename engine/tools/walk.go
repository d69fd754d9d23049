package tools

import (
	"context"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/coda-acp/coda/internal/glob"
	"github.com/coda-acp/coda/internal/rootfs"
)

// A walkEntry is a file a walk came to.
type walkEntry struct {
	dir  *walkDir    // the directory holding it, open
	name string      // its name in dir
	rel  string      // its path under the walk's top, slash-separated
	typ  fs.FileMode // its type bits, as the directory lists them (a symlink is not followed)
}

// A walkDir is a directory of a walk, open as an os.Root of its own, so that
// a file in it is opened by name with one call and nothing swapped in under
// it leads out. It is closed when the walk and everyone who held it (hold)
// are done with it (release).
type walkDir struct {
	root *os.Root
	list *os.File // the directory as listed, where the platform keeps it open (see listable); else nil
	refs atomic.Int32
}

func (d *walkDir) hold() { d.refs.Add(1) }

func (d *walkDir) release() {
	if d.refs.Add(-1) == 0 {
		if d.list != nil {
			d.list.Close()
		}
		d.root.Close()
	}
}

// walkFiles calls fn for every file under the directory top (not
// directories) whose path relative to top matches g (nil matches all), in
// lexical order, as filepath.WalkDir would. .git directories are skipped,
// symlinked directories are not followed, and a directory that cannot be
// read is passed over; only top's own failure is an error. Every directory
// is opened from its parent's os.Root, top from dk's roots, so the walk
// never leaves top. fn must not keep e.dir past its call without holding it.
func walkFiles(ctx context.Context, dk rootfs.Disk, top string, g *glob.Pattern, fn func(e walkEntry) error) error {
	r, err := dk.OpenRoot(top)
	if err != nil {
		return err
	}
	return walkIn(ctx, r, "", g, fn, true)
}

// walkIn walks the directory r, whose path under the walk's top is rel, and
// closes r when it and the holders of its files are done.
func walkIn(ctx context.Context, r *os.Root, rel string, g *glob.Pattern, fn func(e walkEntry) error, top bool) error {
	dir := &walkDir{root: r}
	dir.refs.Store(1)
	defer dir.release()
	entries, err := dir.readDir()
	if err != nil && top {
		return err
	}
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		p := path.Join(rel, e.Name())
		if e.IsDir() {
			if e.Name() == ".git" {
				continue
			}
			sub, err := r.OpenRoot(e.Name())
			if err != nil {
				continue // unreadable below top: pass it over
			}
			if err := walkIn(ctx, sub, p, g, fn, false); err != nil {
				return err
			}
			continue
		}
		if g != nil && !g.Match(p) {
			continue
		}
		if err := fn(walkEntry{dir: dir, name: e.Name(), rel: p, typ: e.Type()}); err != nil {
			return err
		}
	}
	return nil
}

// readDir lists the directory by name, what could be read of it when it
// fails part way (as os.ReadDir does).
func (d *walkDir) readDir() ([]fs.DirEntry, error) {
	f, err := d.root.Open(".")
	if err != nil {
		return nil, err
	}
	l := listable(f)
	if l != f {
		d.list = l // kept open to open the files in it by name (see readIn)
	} else {
		defer f.Close()
	}
	entries, err := l.ReadDir(-1)
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, err
}

// readInRoot is readIn through the directory's os.Root.
func readInRoot(dir *walkDir, name string, buf []byte) (n int, more io.ReadCloser, err error) {
	f, err := dir.root.Open(name)
	if err != nil {
		return 0, nil, err
	}
	return readOpen(f, buf)
}

// readOpen reads f into buf, as much as fits, and says what is left: more is
// nil when buf[:n] is the whole file; the rest of the file, to read and
// close, when it is larger than buf; a reader of the error when reading
// failed. err is for a file that could not be opened.
func readOpen(f *os.File, buf []byte) (n int, more io.ReadCloser, err error) {
	n, err = io.ReadFull(f, buf)
	switch {
	case err == nil:
		return n, f, nil
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		f.Close()
		return n, nil, nil
	}
	f.Close()
	return n, failedRead{err}, nil
}

// failedRead reads as the error a read met.
type failedRead struct{ err error }

func (f failedRead) Read([]byte) (int, error) { return 0, f.err }
func (f failedRead) Close() error             { return nil }
