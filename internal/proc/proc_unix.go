//go:build unix

package proc

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// Shell is the program and arguments that run a command line: /bin/sh -c.
func Shell(line string) (string, []string) { return "/bin/sh", []string{"-c", line} }

// OwnGroup puts the command in a process group of its own, so that what it
// starts in the background can be killed with it.
func OwnGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// KillGroup kills the command's whole process group.
func KillGroup(cmd *exec.Cmd) error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }

// guardScript waits for its stdin to end, then kills the process group
// its $0 names.
const guardScript = `read _; kill -KILL -"$0" 2>/dev/null`

// GuardGroup starts a guard for cmd, started in a group of its own
// (OwnGroup): a shell that kills cmd's whole group when its stdin, a pipe
// only coda holds the other end of, ends. A coda killed outright (kill -9)
// ends it, so what cmd started in its group dies with coda too, which a
// parent-death signal (StartBound: the command's own process only) cannot
// do; on every unix, not only Linux. release ends the guard without
// killing anything, before the group is stopped or when cmd has exited.
func GuardGroup(cmd *exec.Cmd) (release func(), err error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	guard := exec.Command("/bin/sh", "-c", guardScript, strconv.Itoa(cmd.Process.Pid))
	guard.Stdin = r
	guard.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // not in coda's group: a signal to it spares the guard
	if err := guard.Start(); err != nil {
		w.Close()
		return nil, err
	}
	return func() {
		_ = guard.Process.Kill()
		_ = guard.Wait()
		w.Close()
	}, nil
}
