package addrspace

import (
	"bytes"
	"io"
	"log"
	"os"
	"strconv"
	"syscall"
)

// room is what the lowered limit leaves above what the process holds while
// starlark starts: plenty for the packages that start meanwhile, too little
// for a 4 GiB reservation.
const room = 1 << 30

var saved struct {
	limit   syscall.Rlimit
	lowered bool
	log     io.Writer // nil unless the standard logger was silenced
}

func init() {
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_AS, &lim) != nil || lim.Cur == ^uint64(0) {
		return
	}
	// starlark logs its fallback through the standard logger: coda logs
	// through slog, and the fallback is what is meant.
	saved.log = log.Writer()
	log.SetOutput(io.Discard)
	held, ok := inUse()
	if !ok || lim.Cur <= held+room {
		return // too low for the reservation already
	}
	lowered := lim
	lowered.Cur = held + room
	if syscall.Setrlimit(syscall.RLIMIT_AS, &lowered) == nil {
		saved.limit, saved.lowered = lim, true
	}
}

// inUse is the process's address space in use, in bytes.
func inUse() (uint64, bool) {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, false
	}
	f, _, _ := bytes.Cut(b, []byte(" "))
	pages, err := strconv.ParseUint(string(f), 10, 64)
	if err != nil {
		return 0, false
	}
	return pages * uint64(os.Getpagesize()), true
}

// Restore puts back the limit init lowered, once starlark has started.
func Restore() {
	if saved.lowered {
		saved.lowered = false
		_ = syscall.Setrlimit(syscall.RLIMIT_AS, &saved.limit)
	}
	if saved.log != nil {
		log.SetOutput(saved.log)
		saved.log = nil
	}
}
