//go:build unix

package taint

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A private name a command line gave to a FIFO (`mkfifo .env.pipe`) does
// not hold the turn: the gate and the record's matcher read a named file
// only when it is a regular one, and opening a FIFO with no writer would
// wait for one forever.
func TestNamedFIFO_doesNotHang(t *testing.T) {
	cwd := t.TempDir()
	fifo := filepath.Join(cwd, ".env.pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFO here:", err)
	}
	g, _ := New(Launch{Policy: Deny}, nil, cwd, []string{cwd})
	s := NewSecrets(Launch{Policy: Deny}, nil, cwd, []string{cwd})
	done := make(chan string, 1)
	go func() {
		name := g.Read([]Source{{Path: fifo, Text: "", Named: true}})
		s.Read([]Source{{Path: fifo, Named: true}})
		g.Restore(Session{Read: []string{fifo}})
		done <- name
	}()
	select {
	case name := <-done:
		if name != ".env.pipe" {
			t.Errorf("Read = %q, want .env.pipe", name)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("reading a FIFO the command line named hangs")
	}
}

// A FIFO among the files a tool touched does not hold Wrote either, nor
// does a link to a device that never ends.
func TestWrote_FIFO(t *testing.T) {
	cwd := t.TempDir()
	g, _ := New(Launch{Policy: Deny}, nil, cwd, []string{cwd})
	g.Read([]Source{{Path: filepath.Join(cwd, ".env"), Text: "API_KEY=sk-proj-4fGh82kLmN0pQrStUvWxYz12f3\n"}})
	fifo := filepath.Join(cwd, "out.pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFO here:", err)
	}
	zero := filepath.Join(cwd, "zero")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	done := make(chan []string, 1)
	go func() { done <- g.Wrote([]string{fifo, zero}) }()
	select {
	case took := <-done:
		if len(took) != 0 {
			t.Errorf("Wrote = %v, want nothing", took)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Wrote hangs on a FIFO")
	}
}
