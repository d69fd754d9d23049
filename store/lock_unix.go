//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package store

import (
	"errors"
	"os"
	"syscall"
)

// Advisory locks (ARCHITECTURE.md, "The state directory"): flock(2) on
// the whole file. The kernel drops them when the process dies, so a crash
// never leaves a file locked.

// lockFile waits until f is locked for this process alone.
func lockFile(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// tryLockFile locks f if no one else holds it, and says whether it did.
func tryLockFile(f *os.File) (bool, error) {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}

func unlockFile(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }

// openNonblock is the flag that keeps opening a FIFO from waiting for a
// writer: what is opened is checked to be a regular file before it is
// read.
const openNonblock = syscall.O_NONBLOCK

// locksHeld says whether a lock shows that a file is in use: here it does.
const locksHeld = true

// processGone reports whether no process has the id pid.
func processGone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
