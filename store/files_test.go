package store

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"
)

// Clean removes the temporary files no process holds: at once when the
// process named in the file is gone, after orphanAge when it may still run;
// never one that is locked (being written), nor what is not a temporary
// file.
func TestClean(t *testing.T) {
	if !locksHeld {
		t.Skip("no advisory locks here: Clean goes by age alone")
	}
	st := New(t.TempDir())
	tmp := filepath.Join(st.Dir(), tmpDir)
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	gone := exitedPID(t)
	me := strconv.Itoa(os.Getpid())
	put := func(name string, age time.Duration) {
		t.Helper()
		path := filepath.Join(tmp, name)
		if err := os.WriteFile(path, []byte("half"), 0o600); err != nil {
			t.Fatal(err)
		}
		at := time.Now().Add(-age)
		if err := os.Chtimes(path, at, at); err != nil {
			t.Fatal(err)
		}
	}
	put(gone+"-1-a.tmp", 0)           // a killed process's, just made
	put(me+"-2-b.tmp", 0)             // this process's, not yet locked
	put(me+"-3-c.tmp", 2*orphanAge)   // this process's, long forgotten
	put("notapid-4-d.tmp", 0)         // not named by a process
	put(gone+"-5-e.txt", 2*orphanAge) // not a temporary file
	held, err := st.createTemp()      // being written: locked
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	past := time.Now().Add(-2 * orphanAge)
	os.Chtimes(held.Name(), past, past)

	if err := st.Clean(); err != nil {
		t.Fatal(err)
	}
	var left []string
	entries, _ := os.ReadDir(tmp)
	for _, e := range entries {
		left = append(left, e.Name())
	}
	want := []string{me + "-2-b.tmp", gone + "-5-e.txt", filepath.Base(held.Name()), "notapid-4-d.tmp"}
	slices.Sort(want)
	if !slices.Equal(left, want) {
		t.Errorf("left %q, want %q", left, want)
	}
}

// exitedPID is the id of a process that has exited.
func exitedPID(t *testing.T) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return strconv.Itoa(cmd.Process.Pid)
}

// A record's files, and every other file written whole, are made in
// STATE/tmp and renamed into place: a record written leaves nothing
// beside its files, and a failure (here a panic of the hook, as of a fill
// that panics) leaves no temporary file.
func TestWriteWhole_throughTmp(t *testing.T) {
	st := New(t.TempDir())
	n := 0
	st.BeforeWrite = func(path string) {
		n++
		if entries, _ := os.ReadDir(filepath.Join(st.Dir(), tmpDir)); len(entries) != 1 {
			t.Errorf("before %s is written, STATE/tmp holds %d files, want its temporary file", path, len(entries))
		}
		if filepath.Base(path) == "status.json" {
			panic("a bad file")
		}
	}
	run := st.NewRun(RunRecord{RunID: "r1"}, nil)
	run.Start()
	v := run.Visit("a", 1)
	v.WriteText(AnswerFile, "x")
	v.WriteStatus(map[string]string{})
	run.Finish(&RunRecord{Status: "answered"})
	run.Flush()
	if n != 3 { // run.json once: the running one was superseded while queued
		t.Errorf("the hook was called %d times, want 3", n)
	}
	if entries, _ := os.ReadDir(filepath.Join(st.Dir(), tmpDir)); len(entries) != 0 {
		t.Errorf("STATE/tmp holds %d files after the run", len(entries))
	}
	var files []string
	filepath.WalkDir(st.RunDir("r1"), func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(st.RunDir("r1"), path)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if want := []string{"run.json", "stages/001-a@1/answer"}; !slices.Equal(files, want) {
		t.Errorf("the record holds %q, want %q", files, want)
	}
	if _, err := run.KeepArtifact("a.md", func(w io.Writer) error { _, err := io.WriteString(w, "# A\n"); return err }); err != nil {
		t.Fatal(err)
	}
}
