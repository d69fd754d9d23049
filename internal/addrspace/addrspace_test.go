//go:build linux

package addrspace_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/coda-acp/coda/validators"
)

// The child of TestStart_underLimit: CODA_AS_LIMIT sets its address-space
// limit, and then it runs again (exec) as CODA_AS_RUN, started under it.
func TestMain(m *testing.M) {
	if limit := os.Getenv("CODA_AS_LIMIT"); limit != "" {
		n, _ := strconv.ParseUint(limit, 10, 64)
		if err := syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: n, Max: n}); err != nil {
			fmt.Println("setrlimit:", err)
			os.Exit(2)
		}
		env := append(os.Environ(), "CODA_AS_RUN="+limit)
		env = slicesDelete(env, "CODA_AS_LIMIT="+limit)
		err := syscall.Exec(os.Args[0], os.Args, env)
		fmt.Println("exec:", err)
		os.Exit(2)
	}
	if os.Getenv("CODA_AS_RUN") != "" {
		os.Exit(run())
	}
	os.Exit(m.Run())
}

func slicesDelete(env []string, kv string) []string {
	out := env[:0]
	for _, e := range env {
		if e != kv {
			out = append(out, e)
		}
	}
	return out
}

// run is the child's work under the limit: CODA_AS_ROOM bytes reserved,
// as a workload would take them (untouched, so the test costs no memory),
// then a Starlark validator that counts.
func run() int {
	held := vmSize()
	if room, _ := strconv.Atoi(os.Getenv("CODA_AS_ROOM")); room > 0 {
		if _, err := syscall.Mmap(-1, 0, room, syscall.PROT_NONE, syscall.MAP_PRIVATE|syscall.MAP_ANON); err != nil {
			fmt.Printf("started holding %d MiB of address space, and %d MiB more do not fit: %v\n", held>>20, room>>20, err)
			return 1
		}
	}
	v, err := validators.CompileValidator("count.star", []byte(`
def validate(s):
    n = 0
    for i in range(100000):
        n += i % 7
    if n != 299995:
        return "bad sum %d" % n
    return None
`))
	if err != nil {
		fmt.Println("compile:", err)
		return 1
	}
	if reason, err := v.Validate(context.Background(), "x"); reason != "" || err != nil {
		fmt.Println("validate:", reason, err)
		return 1
	}
	var lim syscall.Rlimit
	_ = syscall.Getrlimit(syscall.RLIMIT_AS, &lim)
	fmt.Printf("ok: started holding %d MiB; limit %d MiB\n", held>>20, lim.Cur>>20)
	return 0
}

func vmSize() uint64 {
	b, _ := os.ReadFile("/proc/self/statm")
	f, _, _ := strings.Cut(string(b), " ")
	n, _ := strconv.ParseUint(f, 10, 64)
	return n * uint64(os.Getpagesize())
}

// Under an address-space limit (ulimit -v) that leaves room for
// go.starlark.net's 4 GiB reservation and little beside it, coda starts
// without the reservation: a process limited to 6 GiB still has 2 GiB to
// grow into after it starts, and its validators work; the limit is its
// own again once starlark has started. Under 2 GiB it works too.
func TestStart_underLimit(t *testing.T) {
	for _, tc := range []struct{ limit, room uint64 }{{6 << 30, 2 << 30}, {2 << 30, 0}} {
		limit := tc.limit
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "CODA_AS_LIMIT="+strconv.FormatUint(limit, 10), "CODA_AS_ROOM="+strconv.FormatUint(tc.room, 10))
		out, err := cmd.CombinedOutput()
		t.Logf("limit %d MiB: %s", limit>>20, strings.TrimSpace(string(out)))
		if err != nil || !strings.Contains(string(out), "ok: started holding") ||
			!strings.Contains(string(out), fmt.Sprintf("limit %d MiB", limit>>20)) {
			t.Errorf("under a limit of %d MiB: %v\n%s", limit>>20, err, out)
		}
		if strings.Contains(string(out), "Starlark failed") {
			t.Errorf("starlark's fallback was logged outside slog:\n%s", out)
		}
	}
}
