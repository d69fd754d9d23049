package store

import (
	"os"
	"strconv"
	"strings"
)

// processStart is field 22 of /proc/PID/stat, the process's start time in
// clock ticks since boot; "" when it cannot be read, and zombie for a
// process that has exited and waits to be reaped (its parent gone, where
// the init process does not reap it).
func processStart(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	// The command name (field 2) is in parentheses and may hold spaces:
	// the fields after it are counted from its closing one.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return ""
	}
	fields := strings.Fields(s[i+1:])
	if len(fields) < 20 {
		return ""
	}
	if fields[0] == "Z" || fields[0] == "X" { // field 3, the state
		return zombie
	}
	return fields[19] // field 22: the third is fields[0]
}
