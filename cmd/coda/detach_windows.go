//go:build windows

package main

import (
	"os"
	"os/exec"
	"syscall"
)

// ownSession starts cmd detached from the console, in a process group of
// its own.
func ownSession(cmd *exec.Cmd) {
	const detachedProcess = 0x00000008
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP | detachedProcess}
}

func closeOnExec(*os.File) {}

// stopRun ends the process pid. Windows has no SIGTERM to send another
// process: it is killed, and its record stays running until `coda ps`
// shows it dead.
func stopRun(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}
