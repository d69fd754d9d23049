//go:build unix

package validators

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time the process has used so far: benchmarks report
// it per operation, a figure that other work on a loaded machine does not
// inflate as it does wall time.
func cpuTime() time.Duration {
	var u syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &u) != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
