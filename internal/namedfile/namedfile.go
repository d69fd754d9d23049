// Package namedfile reads a file that a caller names (a client's
// `_meta.coda.output` schemaFile or validator, a `script:` model, a flag):
// only a regular file, only up to a size, and never waiting on it for
// long. A device (/dev/zero), a pipe (/dev/stdin: coda's own ACP input) or
// a FIFO is refused before a byte is read; one swapped in after the check
// is opened without blocking and refused by the opened file's own type.
package namedfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/coda-acp/coda/internal/bytesize"
)

// Errors, as an *os.PathError's Err.
var (
	ErrNotRegular = errors.New("not a regular file (a device, pipe or directory is not read as one)")
	ErrTooLarge   = errors.New("too large")
)

// Wait bounds how long Read waits for a file to open and be read: the
// reading goes on in its own goroutine, so a file system that hangs holds
// up its caller (the ACP read loop, at worst) no longer than this.
const Wait = 5 * time.Second

// BeforeRead, when set (by tests, before any read), is called with each
// path Read reads, where the reading waits: a file system that hangs,
// for as long as it blocks.
var BeforeRead func(path string)

// Read returns the content of the regular file at path, of at most max
// bytes. Its errors are *os.PathErrors: ErrNotRegular, an ErrTooLarge that
// says the limit, the open's or the read's own, or a wait past Wait.
func Read(path string, max int64) ([]byte, error) {
	type result struct {
		b   []byte
		err error
	}
	done := make(chan result, 1)
	hook := BeforeRead
	go func() {
		if hook != nil {
			hook(path)
		}
		b, err := read(path, max)
		done <- result{b, err}
	}()
	timer := time.NewTimer(Wait)
	defer timer.Stop()
	select {
	case r := <-done:
		return r.b, r.err
	case <-timer.C:
		return nil, &os.PathError{Op: "read", Path: path, Err: fmt.Errorf("not read within %s", Wait)}
	}
}

func read(path string, max int64) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &os.PathError{Op: "read", Path: path, Err: ErrNotRegular}
	}
	f, err := os.OpenFile(path, os.O_RDONLY|openFlags, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return nil, err
	}
	tooLarge := &os.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w: over the %s coda reads of such a file", ErrTooLarge, bytesize.Format(int(max)))}
	switch {
	case !fi.Mode().IsRegular():
		return nil, &os.PathError{Op: "read", Path: path, Err: ErrNotRegular}
	case fi.Size() > max:
		return nil, tooLarge
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	switch {
	case err != nil:
		return nil, err
	case int64(len(b)) > max:
		return nil, tooLarge // it grew
	}
	return b, nil
}
