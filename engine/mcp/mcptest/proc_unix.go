//go:build unix

package mcptest

import (
	"errors"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// Gone reports whether process pid has ended: it no longer exists, or it
// is a zombie only its reaper has yet to collect (a container's init may
// never).
func Gone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return errors.Is(err, os.ErrNotExist) && runtime.GOOS == "linux"
	}
	// pid (comm) STATE ...: comm may hold spaces and parentheses.
	s := string(stat)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] == 'Z' || s[i+2] == 'X'
	}
	return false
}

// Fifo makes a FIFO at path: the test server reads a line from it before it
// serves (CODA_MCP_GATE); Open releases it.
func Fifo(t testing.TB, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
}
