//go:build windows

package engine

import "os/exec"

// The shell a command line runs in.
const shellName, shellFlag = "cmd.exe", "/C"

// ownGroup does nothing on Windows: there are no process groups to join.
func ownGroup(*exec.Cmd) {}

// killGroup kills the command; processes it started may outlive it.
func killGroup(cmd *exec.Cmd) error { return cmd.Process.Kill() }
