//go:build unix

package rootfs

import (
	"io/fs"
	"os"
	"syscall"
)

// readNames reads the entries of the folder f, opened in an os.Root, with
// their types as the folder gives them: through a duplicate of its
// descriptor, a File that is not in a Root, whose ReadDir does not lstat
// each entry. name is the folder's path, for an entry whose type the file
// system does not give (DT_UNKNOWN), which ReadDir then lstats by it.
func readNames(f *os.File, name string) ([]fs.DirEntry, error) {
	var fd int
	var err error
	if c, cerr := f.SyscallConn(); cerr != nil {
		return f.ReadDir(-1)
	} else if cerr := c.Control(func(raw uintptr) {
		// Under ForkLock, so a command started meanwhile cannot inherit
		// it before it is marked close-on-exec.
		syscall.ForkLock.RLock()
		if fd, err = syscall.Dup(int(raw)); err == nil {
			syscall.CloseOnExec(fd)
		}
		syscall.ForkLock.RUnlock()
	}); cerr != nil || err != nil {
		return f.ReadDir(-1)
	}
	dir := os.NewFile(uintptr(fd), name)
	defer dir.Close()
	return dir.ReadDir(-1)
}
