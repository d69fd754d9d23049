//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly || windows)

package store

import "os"

// Where coda knows no advisory lock (Plan 9, Solaris, AIX, wasm), each
// append is still one write of whole lines to a file opened to append,
// which the systems coda runs on keep whole; two processes repairing a torn
// line at once are not kept apart, and temporary files are removed by age
// alone (sweep).

func lockFile(*os.File) error            { return nil }
func tryLockFile(*os.File) (bool, error) { return true, nil }
func unlockFile(*os.File) error          { return nil }

const openNonblock = 0

const locksHeld = false

// processGone cannot tell here: a temporary file is a crash's by its age
// alone.
func processGone(int) bool { return false }
