package mcptest

import (
	"errors"
	"syscall"
	"testing"
)

// WaitGone waits until process pid, which need not be the test's child,
// has ended: a pidfd turns readable when it does. A minute without it is a
// hang.
func WaitGone(t testing.TB, pid int) {
	t.Helper()
	const sysPidfdOpen = 434 // the same number on every Linux architecture
	fd, _, errno := syscall.Syscall(sysPidfdOpen, uintptr(pid), 0, 0)
	switch {
	case errno == syscall.ESRCH:
		return
	case errno != 0:
		t.Skipf("pidfd_open: %v", errno)
	}
	defer syscall.Close(int(fd))
	for {
		var set syscall.FdSet
		set.Bits[fd/64] |= 1 << (fd % 64)
		tv := syscall.Timeval{Sec: 60}
		n, err := syscall.Select(int(fd)+1, &set, nil, nil, &tv)
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case err != nil:
			t.Fatalf("waiting for process %d: %v", pid, err)
		case n == 0:
			t.Fatalf("process %d is still running after a minute", pid)
		}
		return
	}
}
