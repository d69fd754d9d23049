package mcptest

import "testing"

// Gone is not implemented on Windows; Server skips the tests that ask.
func Gone(int) bool { return false }

// Fifo skips the test: Windows has no FIFOs.
func Fifo(t testing.TB, _ string) { t.Skip("no FIFOs on Windows") }
