//go:build unix

package namedfile

import "syscall"

// openFlags open without blocking: a FIFO swapped in after the check does
// not wait for a writer.
const openFlags = syscall.O_NONBLOCK | syscall.O_NOCTTY
