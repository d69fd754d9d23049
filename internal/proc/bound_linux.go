package proc

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// StartBound starts cmd so that it dies with coda, however coda dies (kill
// -9 included): Linux's parent-death signal (SIGKILL). The kernel sends it
// when the thread that started the child ends, not the process, and the
// Go runtime may end a thread; so every such command is started from one
// goroutine locked to its thread, which never ends. Only the command's own
// process gets the signal, not what it started.
func StartBound(cmd *exec.Cmd) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	spawner.once.Do(func() {
		spawner.starts = make(chan start)
		go spawn(spawner.starts)
	})
	done := make(chan error, 1)
	spawner.starts <- start{cmd, done}
	return <-done
}

var spawner struct {
	once   sync.Once
	starts chan start
}

type start struct {
	cmd  *exec.Cmd
	done chan error
}

// spawn starts commands on its own thread for the rest of the process.
func spawn(starts <-chan start) {
	runtime.LockOSThread() // never unlocked: the thread lives as long as coda
	for s := range starts {
		s.done <- s.cmd.Start()
	}
}
