//go:build !unix

package taint

import "time"

var benchStart = time.Now()

// cpuTime is wall time where a process's CPU time is not at hand.
func cpuTime() time.Duration { return time.Since(benchStart) }
