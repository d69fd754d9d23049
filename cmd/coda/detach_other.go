//go:build !unix && !windows

package main

import (
	"errors"
	"os"
	"os/exec"
)

func ownSession(*exec.Cmd) {}

func closeOnExec(*os.File) {}

func stopRun(int) error { return errors.New("stopping another process is not supported here") }
