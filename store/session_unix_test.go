//go:build unix

package store_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coda-acp/coda/store"
)

// Only regular files inside the state directory are read: a FIFO where a
// session's file goes is refused at once (not waited on for a writer), and
// so is a link to a device or to a file out of the state directory.
func TestSession_onlyRegularFiles(t *testing.T) {
	st := store.New(t.TempDir())
	dir := filepath.Join(st.Dir(), "sessions")
	os.MkdirAll(dir, 0o755)
	if err := syscall.Mkfifo(filepath.Join(dir, "s-fifo.jsonl"), 0o600); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "s-out.jsonl")
	os.WriteFile(outside, []byte(`{"type":"session","version":2,"session":{"id":"s-out","cwd":"/w"}}`+"\n"), 0o600)
	os.Symlink(outside, filepath.Join(dir, "s-out.jsonl"))
	os.Symlink("/dev/zero", filepath.Join(dir, "s-dev.jsonl"))
	os.Symlink(outside, filepath.Join(dir, "s-old.json"))
	for id, want := range map[string]string{
		"s-fifo": "not a regular file", "s-out": "leads out of the state directory",
		"s-dev": "leads out of the state directory", "s-old": "leads out of the state directory",
	} {
		done := make(chan error, 1)
		go func() { _, err := st.LoadSession(id, nil); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %v, want %q", id, err, want)
			}
		case <-time.After(time.Minute): // a hang detector, not a deadline
			// A FIFO opened to read without O_NONBLOCK waits for a writer.
			t.Fatalf("%s: the load waited a minute, and waits still", id)
		}
	}
	listed := make(chan error, 1)
	go func() {
		page, err := st.ListSessions("", nil, 50)
		if err == nil && (len(page.Sessions) != 0 || len(page.Skipped) != 4) {
			err = fmt.Errorf("listed %+v; want none, the four skipped", page)
		}
		listed <- err
	}()
	select {
	case err := <-listed:
		if err != nil {
			t.Error(err)
		}
	case <-time.After(time.Minute): // a hang detector, not a deadline
		t.Fatal("the listing waited a minute, and waits still")
	}
}
