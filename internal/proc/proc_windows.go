//go:build windows

package proc

import "os/exec"

// Shell is the program and arguments that run a command line: cmd.exe /C.
func Shell(line string) (string, []string) { return "cmd.exe", []string{"/C", line} }

// OwnGroup does nothing on Windows: there are no process groups to join.
func OwnGroup(*exec.Cmd) {}

// KillGroup kills the command; processes it started may outlive it.
func KillGroup(cmd *exec.Cmd) error { return cmd.Process.Kill() }
