//go:build unix

package gemini

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time the process has used, user and system: what a
// benchmark reports as cpu-ns, unswayed by the other work a shared machine
// runs meanwhile.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
