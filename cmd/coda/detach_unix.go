//go:build unix

package main

import (
	"os"
	"os/exec"
	"syscall"
)

// ownSession starts cmd in a session and process group of its own: no
// terminal's hang-up or Ctrl-C reaches it.
func ownSession(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} }

func closeOnExec(f *os.File) { syscall.CloseOnExec(int(f.Fd())) }

// stopRun asks the process pid to stop its run: SIGTERM, which it handles
// by cancelling the run and finishing its record (`cancelled`).
func stopRun(pid int) error { return syscall.Kill(pid, syscall.SIGTERM) }
