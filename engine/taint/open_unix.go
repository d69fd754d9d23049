//go:build unix

package taint

import "syscall"

// openFlags open a file the walk listed as regular without waiting on it:
// a FIFO swapped in since does not hold the gate.
const openFlags = syscall.O_NONBLOCK | syscall.O_NOCTTY
