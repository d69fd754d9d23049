package store

import (
	"os"
	"strconv"
	"sync"
)

// A Process is the process that runs a run (DESIGN §21): its id, and when
// it started as the system counts it, which tells the process from a later
// one that was given the same id once it died. `coda ps` shows a run whose
// process is gone as dead, never as running for ever.
type Process struct {
	PID int `json:"pid"`
	// Start is the process's start time as the system counts it (Linux:
	// /proc/PID/stat's starttime, in clock ticks since boot); "" where it
	// cannot be read, and then the id alone is checked.
	Start string `json:"start,omitempty"`
	// Detached says the run was started by `coda run --detach`, in a
	// process of its own that `coda cancel` may stop.
	Detached bool `json:"detached,omitempty"`
}

// ProcessOf is the process pid as it stands now.
func ProcessOf(pid int) Process { return Process{PID: pid, Start: processStart(pid)} }

// Self is this process, read once: every run's record names it.
var Self = sync.OnceValue(func() Process { return ProcessOf(os.Getpid()) })

// Alive reports whether p is still running: a process has its id, and,
// where start times are known, the same start time. It cannot tell on the
// systems where processGone cannot (lock_other.go): there every process is
// taken to be alive.
func (p Process) Alive() bool {
	if p.PID <= 0 || processGone(p.PID) {
		return false
	}
	now := processStart(p.PID)
	return now != zombie && (p.Start == "" || now == "" || now == p.Start)
}

// zombie is processStart's word for a process that has exited but is not
// reaped yet: it is dead.
const zombie = "zombie"

// String is the process's id, as `coda ps` shows it.
func (p Process) String() string { return strconv.Itoa(p.PID) }
