//go:build unix

package local_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/local"
)

func TestWorkspace_files(t *testing.T) {
	dir := t.TempDir()
	w := &local.Workspace{Dir: dir, Extra: []string{"/extra"}}
	ctx := context.Background()
	if got := w.Roots(); len(got) != 2 || got[0] != dir || got[1] != "/extra" {
		t.Errorf("Roots = %q", got)
	}
	path := filepath.Join(dir, "new", "a.txt")
	if err := w.WriteTextFile(ctx, path, "héllo"); err != nil {
		t.Fatal(err)
	}
	if got, err := w.ReadTextFile(ctx, path); err != nil || got != "héllo" {
		t.Errorf("ReadTextFile = %q, %v", got, err)
	}
	f, err := w.OpenFile(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 3)
	if n, _ := f.ReadAt(buf, 3); f.Size() != 6 || string(buf[:n]) != "llo" {
		t.Errorf("Size %d, ReadAt %q", f.Size(), buf[:n])
	}
	f.Close()
	if _, err := w.OpenFile(ctx, dir); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("OpenFile(dir) = %v", err)
	}
	if _, err := w.OpenFile(ctx, filepath.Join(dir, "none")); !os.IsNotExist(err) {
		t.Errorf("OpenFile(missing) = %v", err)
	}
}

// Without Approve every request is denied; with it, it decides.
func TestWorkspace_permission(t *testing.T) {
	ctx := context.Background()
	if ok, err := (&local.Workspace{}).RequestPermission(ctx, engine.PermissionRequest{Key: "shell"}); ok || err != nil {
		t.Errorf("no Approve: %v, %v", ok, err)
	}
	w := &local.Workspace{Approve: func(_ context.Context, req engine.PermissionRequest) (bool, error) {
		return req.Key == "shell", nil
	}}
	if ok, _ := w.RequestPermission(ctx, engine.PermissionRequest{Key: "shell"}); !ok {
		t.Error("Approve said yes, RequestPermission no")
	}
}

func TestWorkspace_RunCommand(t *testing.T) {
	dir := t.TempDir()
	w := &local.Workspace{Dir: dir}
	ctx := context.Background()

	res, err := w.RunCommand(ctx, engine.Command{Line: "pwd; echo oops >&2; exit 3"})
	if err != nil || res.ExitCode != 3 || res.Output != dir+"\noops\n" || res.Truncated {
		t.Errorf("RunCommand = %+v, %v", res, err)
	}

	// The head and the tail are kept, the middle counted.
	res, err = w.RunCommand(ctx, engine.Command{Line: "printf 'abcde%090d12345' 0", OutputLimit: 10})
	if err != nil || !res.Truncated || res.CutBytes != 90 || res.Output != "abcde\n[... 90 bytes of output cut ...]\n12345" {
		t.Errorf("capped: %+v, %v", res, err)
	}

	// What the command leaves running in the background does not hold the
	// call: the group is killed when the shell exits.
	res, err = w.RunCommand(ctx, engine.Command{Line: "sleep 600 & echo started"})
	if err != nil || res.Output != "started\n" || res.ExitCode != 0 {
		t.Errorf("background: %+v, %v", res, err)
	}

	// A command that outlives its timeout is killed, however long it would
	// have run: the outcome does not depend on the machine's speed.
	res, err = w.RunCommand(ctx, engine.Command{Line: "sleep 600", Timeout: 50 * time.Millisecond})
	if err != nil || !res.TimedOut || res.Signal == "" {
		t.Errorf("timeout: %+v, %v", res, err)
	}

	// A cancelled context ends the command and is the error.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := w.RunCommand(cctx, engine.Command{Line: "sleep 600"}); err == nil {
		t.Error("a cancelled command returned no error")
	}
}
