//go:build !linux

package tools

import "io"

// readIn reads the file called name in dir into buf, as much as fits,
// through the directory's os.Root. See readOpen for the results.
func readIn(dir *walkDir, name string, buf []byte) (n int, more io.ReadCloser, err error) {
	return readInRoot(dir, name, buf)
}
