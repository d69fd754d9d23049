//go:build windows

package store

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// Advisory locks on Windows: LockFileEx on the file's first byte range (the
// whole of any file coda writes), released when the process dies.

const lockBytes = 1 << 30 // the range locked: past any session's limit

func lockFile(f *os.File) error {
	ol := new(windows.Overlapped)
	return windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK, 0, lockBytes, 0, ol)
}

func tryLockFile(f *os.File) (bool, error) {
	ol := new(windows.Overlapped)
	err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, lockBytes, 0, ol)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) || errors.Is(err, windows.ERROR_IO_PENDING) {
		return false, nil
	}
	return err == nil, err
}

func unlockFile(f *os.File) error {
	ol := new(windows.Overlapped)
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, lockBytes, 0, ol)
}

// Named pipes are not files of a directory on Windows: no flag is needed.
const openNonblock = 0

const locksHeld = true

// processGone reports whether no process has the id pid: it cannot be
// opened, for a reason other than access.
func processGone(pid int) bool {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return errors.Is(err, windows.ERROR_INVALID_PARAMETER)
	}
	var code uint32
	gone := windows.GetExitCodeProcess(h, &code) == nil && code != 259 // STILL_ACTIVE
	windows.CloseHandle(h)
	return gone
}
