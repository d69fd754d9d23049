//go:build !unix

package benchcpu

import "time"

// processCPU is not read here: Report gives the wall time alone.
func processCPU() time.Duration { return 0 }
