// Package mcptest gives tests the MCP server of testdata/mcpserver, built
// once per test binary, and a way to see that a process is gone.
package mcptest

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
)

var build struct {
	once sync.Once
	dir  string
	bin  string
	err  error
}

// Server is the path of the test server, built the first time it is asked
// for. Tests that use it are skipped where it cannot run (Windows: it needs
// FIFOs and process groups). A package calling it calls Cleanup from
// TestMain.
func Server(t testing.TB) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the MCP test server needs FIFOs and process groups")
	}
	build.once.Do(func() {
		out, err := exec.Command("go", "env", "GOMOD").Output()
		if err != nil {
			build.err = err
			return
		}
		root := filepath.Dir(strings.TrimSpace(string(out)))
		if build.dir, build.err = os.MkdirTemp("", "coda-mcpserver-"); build.err != nil {
			return
		}
		build.bin = filepath.Join(build.dir, "mcpserver")
		cmd := exec.Command("go", "build", "-o", build.bin, "./testdata/mcpserver")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			build.err = errors.New("go build ./testdata/mcpserver: " + err.Error() + "\n" + string(out))
		}
	})
	if build.err != nil {
		t.Fatal(build.err)
	}
	return build.bin
}

// Cleanup removes the built server; the next Server builds it again (a
// test run with -count reruns the tests after their cleanups).
func Cleanup() {
	if build.dir != "" {
		os.RemoveAll(build.dir)
	}
	build.once, build.dir, build.bin, build.err = sync.Once{}, "", "", nil
}

// PID reads the pid the test server wrote to path (CODA_MCP_PIDFILE).
func PID(t testing.TB, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the MCP server wrote no pid: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// Open releases a server waiting on the FIFO at path.
func Open(t testing.TB, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString("go\n"); err != nil {
		t.Fatal(err)
	}
}

// ReadLine waits for a line written to the FIFO at path (a server saying a
// call has begun).
func ReadLine(t testing.TB, path string) {
	f, err := os.Open(path)
	if err != nil {
		t.Error(err)
		return
	}
	defer f.Close()
	_, _ = bufio.NewReader(f).ReadString('\n')
}
