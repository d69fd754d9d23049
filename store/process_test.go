package store_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"runtime"
	"testing"

	"github.com/coda-acp/coda/store"
)

// A run's process is alive while it runs, and dead once it exits, or when
// another process has its id (another start time).
func TestProcess_Alive(t *testing.T) {
	if !store.Self().Alive() {
		t.Fatal("this process is not alive")
	}
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("whether another process is gone is known on unix")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := store.ProcessOf(cmd.Process.Pid)
	if !p.Alive() {
		t.Errorf("%v: a process just started is not alive", p)
	}
	cmd.Wait()
	if p.Alive() {
		t.Errorf("%v: a process that exited and was reaped is alive", p)
	}
	if runtime.GOOS == "linux" {
		other := store.Self()
		other.Start += "1" // the id, but another start
		if other.Alive() {
			t.Error("another process with this one's id is taken for it")
		}
	}
}

// WaitRun returns once run.json says what it waits for, whenever it is
// written; a run that is not there is an error at once.
func TestStore_WaitRun(t *testing.T) {
	st := store.New(t.TempDir())
	if _, err := st.WaitRun(context.Background(), "nope", func(*store.RunRecord) bool { return true }); err == nil {
		t.Error("waiting for a run that is not there")
	}
	if err := st.WriteRun(&store.RunRecord{RunID: "r1", Status: "running"}); err != nil {
		t.Fatal(err)
	}
	done := make(chan *store.RunRecord)
	go func() {
		rr, err := st.WaitRun(context.Background(), "r1", func(rr *store.RunRecord) bool { return rr.Status != "running" })
		if err != nil {
			t.Error(err)
		}
		done <- rr
	}()
	if err := st.WriteRun(&store.RunRecord{RunID: "r1", Status: "answered"}); err != nil {
		t.Fatal(err)
	}
	if rr := <-done; rr == nil || rr.Status != "answered" {
		t.Errorf("WaitRun = %+v", rr)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := st.WaitRun(ctx, "r1", func(*store.RunRecord) bool { return false }); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled wait: %v", err)
	}
}

// One process runs a run: its lock is refused to another taker while it
// is held, and given once it is released.
func TestStore_LockRun(t *testing.T) {
	st := store.New(t.TempDir())
	release, held, err := st.LockRun("r1")
	if err != nil || held {
		t.Fatalf("LockRun = %v, %v", held, err)
	}
	if runtime.GOOS == "linux" || runtime.GOOS == "darwin" || runtime.GOOS == "windows" {
		if _, held, err := st.LockRun("r1"); err != nil || !held {
			t.Errorf("a second LockRun while held = %v, %v", held, err)
		}
	}
	release()
	again, held, err := st.LockRun("r1")
	if err != nil || held {
		t.Fatalf("LockRun after release = %v, %v", held, err)
	}
	again()
}

// A run's launch.json and checkpoint read back; a run without them says
// so (fs.ErrNotExist); Visits counts the record's stage visits.
func TestStore_launchAndCheckpoint(t *testing.T) {
	st := store.New(t.TempDir())
	if _, err := st.ReadLaunch("r1"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadLaunch of none: %v", err)
	}
	var x map[string]any
	if err := st.ReadCheckpoint("r1", &x); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadCheckpoint of none: %v", err)
	}
	want := &store.Launch{Args: []string{"--agent", "a", "Go."}, Dir: "/w", StateDir: st.Dir(), Agent: "a", Blueprint: "h"}
	if err := st.WriteLaunch("r1", want); err != nil {
		t.Fatal(err)
	}
	got, err := st.ReadLaunch("r1")
	if err != nil || got.Dir != "/w" || len(got.Args) != 3 || got.Blueprint != "h" {
		t.Errorf("ReadLaunch = %+v, %v", got, err)
	}
	run := st.NewRun(store.RunRecord{RunID: "r1", Agent: "a"}, nil)
	run.Visit("one", 1).WriteStatus(map[string]string{"stage": "one"})
	run.Visit("two", 1).WriteStatus(map[string]string{"stage": "two"})
	run.Checkpoint(map[string]string{"next": "three"})
	run.Flush()
	if err := st.ReadCheckpoint("r1", &x); err != nil || x["next"] != "three" {
		t.Errorf("ReadCheckpoint = %v, %v", x, err)
	}
	if n, err := st.Visits("r1"); n != 2 || err != nil {
		t.Errorf("Visits = %d, %v", n, err)
	}
}

// A new run's record is its own: an id another run has is not taken.
func TestStore_ClaimRun(t *testing.T) {
	st := store.New(t.TempDir())
	ids := []string{"r1", "r1", "r2"}
	next := func() string { id := ids[0]; ids = ids[1:]; return id }
	if id, err := st.ClaimRun(next); id != "r1" || err != nil {
		t.Fatalf("ClaimRun = %q, %v", id, err)
	}
	if id, err := st.ClaimRun(next); id != "r2" || err != nil {
		t.Errorf("ClaimRun with r1 taken = %q, %v; want r2", id, err)
	}
	if _, err := st.ClaimRun(func() string { return "r1" }); err == nil {
		t.Error("ClaimRun made a run of an id always taken")
	}
}
