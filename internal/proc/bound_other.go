//go:build !linux

package proc

import "os/exec"

// StartBound starts cmd. Only Linux has a parent-death signal: elsewhere a
// command outlives a coda killed outright, and ends when its input does.
func StartBound(cmd *exec.Cmd) error { return cmd.Start() }
