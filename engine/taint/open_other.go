//go:build !unix

package taint

// openFlags are none where a FIFO cannot be swapped in for a file.
const openFlags = 0
