//go:build unix

package engine

import (
	"os/exec"
	"syscall"
)

// The shell a command line runs in.
const shellName, shellFlag = "/bin/sh", "-c"

// ownGroup puts the command in a process group of its own, so that what it
// starts in the background can be killed with it.
func ownGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// killGroup kills the command's whole process group.
func killGroup(cmd *exec.Cmd) error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
