//go:build !unix

package gemini

import "time"

// cpuTime is not measured here: cpu-ns is left out.
func cpuTime() time.Duration { return 0 }
