//go:build !unix

package rootfs

import (
	"io/fs"
	"os"
)

// readNames reads the entries of the folder f: elsewhere than unix, as
// ReadDir reads them.
func readNames(f *os.File, _ string) ([]fs.DirEntry, error) { return f.ReadDir(-1) }
