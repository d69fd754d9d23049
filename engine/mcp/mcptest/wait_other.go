//go:build !linux

package mcptest

import "testing"

// WaitGone needs Linux's pidfds; elsewhere the test is skipped.
func WaitGone(t testing.TB, pid int) {
	t.Helper()
	t.Skip("waiting for a process that is not a child needs Linux's pidfd")
}
