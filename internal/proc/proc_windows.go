//go:build windows

package proc

import "os/exec"

// Shell is the program and arguments that run a command line: cmd.exe /C.
func Shell(line string) (string, []string) { return "cmd.exe", []string{"/C", line} }

// OwnGroup does nothing on Windows: there are no process groups to join.
func OwnGroup(*exec.Cmd) {}

// KillGroup kills the command; processes it started may outlive it.
func KillGroup(cmd *exec.Cmd) error { return cmd.Process.Kill() }

// GuardGroup does nothing on Windows: a command's children outlive a coda
// killed outright (a job object would hold them; coda does not make one),
// and a coda that stops kills the command only.
func GuardGroup(*exec.Cmd) (release func(), err error) { return func() {}, nil }
