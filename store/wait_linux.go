package store

import (
	"os"

	"golang.org/x/sys/unix"
)

// watchDir sends on the channel it returns when a file in dir is written
// or renamed into it (run.json is renamed into place); nil when dir cannot
// be watched. stop ends the watch.
func watchDir(dir string) (<-chan struct{}, func()) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, func() {}
	}
	if _, err := unix.InotifyAddWatch(fd, dir, unix.IN_MOVED_TO|unix.IN_CLOSE_WRITE|unix.IN_CREATE|unix.IN_DELETE_SELF); err != nil {
		unix.Close(fd)
		return nil, func() {}
	}
	// Non-blocking, so Go's poller reads it and Close ends a Read.
	f := os.NewFile(uintptr(fd), "inotify")
	changed := make(chan struct{}, 1)
	go func() {
		buf := make([]byte, 4096)
		for {
			if _, err := f.Read(buf); err != nil {
				return
			}
			select {
			case changed <- struct{}{}:
			default:
			}
		}
	}()
	return changed, func() { f.Close() }
}
