package store

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// How the store opens and makes files (DESIGN §18): every file it reads
// is opened inside the state directory through an os.Root (a link that
// leads out of it is refused), without waiting (a FIFO put where a
// session's file should be is not waited on), and refused unless it is a
// regular file. Every file written whole goes through a temporary file in
// STATE/tmp, locked while it is written, then renamed into place; the
// next start removes what a crash left there (Clean).

// tmpDir is where temporary files are made.
const tmpDir = "tmp"

// errNotRegular refuses what is not a regular file.
var errNotRegular = errors.New("not a regular file")

// openIn opens name (slash-separated, relative to the state directory)
// through an os.Root, with flag, and refuses it unless it is a regular
// file. A missing file is fs.ErrNotExist.
func (s *Store) openIn(name string, flag int) (*os.File, os.FileInfo, error) {
	if s.BeforeRead != nil && flag == os.O_RDONLY {
		s.BeforeRead(filepath.Join(s.dir, filepath.FromSlash(name)))
	}
	root, err := os.OpenRoot(s.dir)
	if err != nil {
		return nil, nil, err
	}
	defer root.Close()
	f, err := root.OpenFile(filepath.FromSlash(name), flag|openNonblock, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%s: %w (%s)", filepath.Join(s.dir, filepath.FromSlash(name)), errNotRegular, kindOf(fi.Mode()))
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// kindOf names what a file that is not regular is.
func kindOf(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeDevice != 0, m&fs.ModeCharDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m.IsDir():
		return "a directory"
	}
	return m.Type().String()
}

// tmpSeq makes temporary names distinct within the process.
var tmpSeq atomic.Int64

// writeWhole writes the file at path (absolute, inside the state
// directory) with what fill writes: to a temporary file in STATE/tmp,
// locked while it is written, synced when sync is set, then renamed over
// path, whose folder is made on first use. A reader never sees half a
// file, and a crash leaves only the temporary file, which Clean removes.
// The BeforeWrite hook is called once the temporary file is made.
func (s *Store) writeWhole(path string, sync bool, fill func(io.Writer) error) error {
	return s.writeVia(path, sync, s.hook(), fill)
}

// writeVia is writeWhole with the hook called, hook when not nil.
func (s *Store) writeVia(path string, sync bool, hook func(string), fill func(io.Writer) error) error {
	tmp, err := s.createTemp()
	if err != nil {
		return err
	}
	placed := false
	defer func() {
		if !placed { // a failure, or a panic in fill or the hook
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if hook != nil {
		hook(path)
	}
	bw := bufio.NewWriter(tmp)
	err = fill(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil && sync {
		err = tmp.Sync()
	}
	if runtime.GOOS == "windows" {
		// Windows renames no file that is open: the lock ends here, and
		// Clean's age alone keeps it from a file just written.
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
	}
	if err == nil {
		if err = os.Rename(tmp.Name(), path); errors.Is(err, fs.ErrNotExist) {
			if err = os.MkdirAll(filepath.Dir(path), 0o755); err == nil {
				err = os.Rename(tmp.Name(), path)
			}
		}
	}
	if err != nil {
		return err
	}
	placed = true
	tmp.Close() // after the rename: the lock held until it is in place
	return nil
}

// createTemp makes a temporary file in STATE/tmp, locked.
func (s *Store) createTemp() (*os.File, error) {
	dir := filepath.Join(s.dir, tmpDir)
	name := func() string {
		return filepath.Join(dir, strconv.Itoa(os.Getpid())+"-"+strconv.FormatInt(tmpSeq.Add(1), 36)+"-"+strconv.FormatInt(time.Now().UnixNano()%1e9, 36)+".tmp")
	}
	f, err := os.OpenFile(name(), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		// The folder is made on first use; where it cannot be (a state
		// directory that is a file), the error names what is in the way.
		if merr := os.MkdirAll(dir, 0o700); merr != nil {
			return nil, merr
		}
		if errors.Is(err, fs.ErrNotExist) {
			f, err = os.OpenFile(name(), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		}
	}
	if err != nil {
		return nil, err
	}
	if err := lockFile(f); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return f, nil
}

// orphanAge is how old a temporary file must be before Clean takes it for
// a crash's when the process named in it may still run: younger ones may
// be another process's, just made and not yet locked. Where there are no
// locks, it is all Clean goes by.
var orphanAge = func() time.Duration {
	if locksHeld {
		return time.Minute
	}
	return time.Hour
}()

// Clean removes what a crash left in the state directory: temporary files
// no process holds (a coda killed while it wrote one). Every file written
// whole, the run records' included, is made in STATE/tmp, so that one
// folder is all it reads. Serving and `coda run` call it at start.
func (s *Store) Clean() error {
	if s == nil {
		return nil
	}
	return s.sweep(time.Now().Add(-orphanAge))
}

// sweep removes the temporary files no process holds locked that were made
// before cutoff, or whose process (the pid that starts the name) is gone.
func (s *Store) sweep(cutoff time.Time) error {
	dir := filepath.Join(s.dir, tmpDir)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var first error
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".tmp") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		fi, err := e.Info()
		if err != nil || !fi.Mode().IsRegular() || fi.ModTime().After(cutoff) && !ownerGone(e.Name()) {
			continue
		}
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			continue
		}
		ok, _ := tryLockFile(f)
		if ok && os.Remove(path) == nil {
			f.Close()
			continue
		}
		f.Close()
		if ok { // Windows removes no file that is open
			if err := os.Remove(path); err != nil && first == nil && !errors.Is(err, fs.ErrNotExist) {
				first = err
			}
		}
	}
	return first
}

// ownerGone reports whether the process that made the temporary file name
// (createTemp: PID-SEQ-TIME.tmp) is gone: a file it left, not locked, is a
// crash's at any age. A process of the same id in another PID namespace
// would hold its file locked, which sweep checks too.
func ownerGone(name string) bool {
	head, _, ok := strings.Cut(name, "-")
	pid, err := strconv.Atoi(head)
	return ok && err == nil && pid > 0 && pid != os.Getpid() && processGone(pid)
}
