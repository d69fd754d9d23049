//go:build unix

package tools

import (
	"os"
	"syscall"
)

// listable returns the directory f, opened in an os.Root, as a file of its
// own: the os package looks up every entry of a directory it lists through
// a Root with a stat call of its own, though the listing itself says what
// type each entry is; a grep over a large tree would pay twice the system
// calls. The descriptor is the same directory, so the walk stays where its
// Root is. f is closed; when it cannot be duplicated it is returned as is.
func listable(f *os.File) *os.File {
	syscall.ForkLock.RLock() // no command started meanwhile may inherit it
	fd, err := syscall.Dup(int(f.Fd()))
	if err == nil {
		syscall.CloseOnExec(fd)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return f
	}
	name := f.Name()
	f.Close()
	return os.NewFile(uintptr(fd), name)
}
