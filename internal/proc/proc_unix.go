//go:build unix

package proc

import (
	"os/exec"
	"syscall"
)

// Shell is the program and arguments that run a command line: /bin/sh -c.
func Shell(line string) (string, []string) { return "/bin/sh", []string{"-c", line} }

// OwnGroup puts the command in a process group of its own, so that what it
// starts in the background can be killed with it.
func OwnGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// KillGroup kills the command's whole process group.
func KillGroup(cmd *exec.Cmd) error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
