//go:build !unix

package validators

import "time"

// cpuTime is unknown here: the cpu-ns/op figures read 0.
func cpuTime() time.Duration { return 0 }
