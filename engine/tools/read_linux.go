package tools

import (
	"io"
	"os"
	"syscall"
)

// readIn reads the file called name in dir into buf, as much as fits. It
// opens the file relative to the directory's own descriptor, with one call
// that cannot leave the directory (one name, no symlink followed: the entry
// was a regular file when listed) nor wait on a FIFO swapped in since, and
// reads it without the os package's per-file bookkeeping: what a search of
// thousands of small files spends most on. See readOpen for the results.
func readIn(dir *walkDir, name string, buf []byte) (n int, more io.ReadCloser, err error) {
	if dir.list == nil {
		return readInRoot(dir, name, buf)
	}
	var fd int
	for {
		fd, err = syscall.Openat(int(dir.list.Fd()), name, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return 0, nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	for n < len(buf) {
		k, err := syscall.Read(fd, buf[n:])
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			syscall.Close(fd)
			return n, failedRead{&os.PathError{Op: "read", Path: name, Err: err}}, nil
		case k == 0:
			syscall.Close(fd)
			return n, nil, nil
		}
		n += k
	}
	return n, os.NewFile(uintptr(fd), name), nil
}
