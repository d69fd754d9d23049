//go:build unix

package namedfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/coda-acp/coda/internal/namedfile"
)

// A regular file is read; a device, a pipe, a FIFO and a directory are
// refused without a byte read, as is a file over the limit.
func TestRead(t *testing.T) {
	dir := t.TempDir()
	ok := filepath.Join(dir, "s.json")
	big := filepath.Join(dir, "big.json")
	os.WriteFile(ok, []byte(`{}`), 0o600)
	os.WriteFile(big, []byte(strings.Repeat(" ", 2048)), 0o600)
	if b, err := namedfile.Read(ok, 1024); err != nil || string(b) != "{}" {
		t.Errorf("Read(regular) = %q, %v", b, err)
	}
	if _, err := namedfile.Read(big, 1024); !errors.Is(err, namedfile.ErrTooLarge) || !strings.Contains(err.Error(), "over the 1 KB") {
		t.Errorf("Read(big) = %v, want too large", err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	refused := []string{dir, "/dev/zero", "/dev/stdin", fifo}
	for _, p := range refused {
		if _, err := namedfile.Read(p, 1024); !errors.Is(err, namedfile.ErrNotRegular) {
			t.Errorf("Read(%s) = %v, want not a regular file", p, err)
		}
	}
}
