//go:build unix

package store_test

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coda-acp/coda/store"
)

// The crash test's helper process: the test binary again, running
// TestCrashHelper with what to do in its environment.
const crashEnv = "CODA_STORE_CRASH_HELPER"

// TestCrashHelper is a coda process of TestCrash: on the state directory
// CODA_STATE it makes session s-1 when there is none and runs one turn in
// it as coda does (the record queued, the exchange appended and synced,
// the record finished after), killing itself with SIGKILL at the
// CODA_KILL_AT-th write (Store.BeforeWrite); with 0 it lives and prints
// how many writes it made. It does nothing when run as a test.
func TestCrashHelper(t *testing.T) {
	if os.Getenv(crashEnv) == "" {
		t.Skip("a helper of TestCrash")
	}
	st := store.New(os.Getenv("CODA_STATE"))
	killAt, _ := strconv.Atoi(os.Getenv("CODA_KILL_AT"))
	var mu sync.Mutex // the record's writer and the index's write from goroutines of their own
	writes := 0
	st.BeforeWrite = func(string) {
		mu.Lock()
		defer mu.Unlock()
		if writes++; writes == killAt {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {} // the signal is on its way
		}
	}
	state := store.SessionState{ID: "s-1", Cwd: "/w", CreatedAt: time.Now().UTC()}
	var ss *store.Session
	if l, err := st.LoadSession("s-1", nil); err == nil {
		ss, state = l.Session, l.State
	} else if ss, err = st.CreateSession(state); err != nil {
		t.Fatal(err)
	}
	run := st.NewRun(store.RunRecord{RunID: "r-crash", Agent: "a", Session: "s-1", Prompt: "Go."}, nil)
	run.Start()
	v := run.Visit("answer", 1)
	v.WritePrompt(func(w io.Writer) error { _, err := io.WriteString(w, "# System\n\nGo.\n"); return err })
	v.WriteResponse(func(w io.Writer) error { _, err := io.WriteString(w, "## Call 1\n\nDone.\n"); return err })
	v.WriteStatus(map[string]any{"stage": "answer", "answered": true})
	v.WriteText(store.AnswerFile, "Done.")
	if _, err := run.KeepArtifact("report.md", func(w io.Writer) error { _, err := io.WriteString(w, "# Report\n"); return err }); err != nil {
		t.Fatal(err)
	}
	run.Finish(&store.RunRecord{Status: "answered", FinalOutput: &store.Answer{Content: "Done."}})
	state.Title = "Go."
	if err := ss.Append(state, exchange(1)); err != nil {
		t.Fatal(err)
	}
	run.Flush()
	st.Flush()
	mu.Lock()
	fmt.Printf("writes=%d\n", writes)
	mu.Unlock()
}

// A crash at any write of a turn (SIGKILL, in a process of its own, at the
// first write, the second, ... each time in a state directory holding a
// session of one exchange) leaves, after the next start's Clean, a session
// that loads with every whole exchange, lists, and takes the next turn, a
// record that is whole or not there, and no temporary file anywhere in the
// state directory. The same from an empty state directory, the session's
// creation among the writes (issue 23: a kill -9 during a save left temp
// files of up to 56 MiB for ever).
func TestCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("a process for each write of a turn")
	}
	for _, fresh := range []bool{false, true} {
		name := "session of one exchange"
		if fresh {
			name = "new session"
		}
		t.Run(name, func(t *testing.T) {
			prepare := func() string {
				dir := t.TempDir()
				if !fresh {
					ss, err := store.New(dir).CreateSession(store.SessionState{ID: "s-1", Cwd: "/w"})
					if err != nil {
						t.Fatal(err)
					}
					if err := ss.Append(store.SessionState{ID: "s-1", Cwd: "/w"}, exchange(0)); err != nil {
						t.Fatal(err)
					}
				}
				return dir
			}
			out, err := crashHelper(prepare(), 0).Output()
			m := regexp.MustCompile(`(?m)^writes=(\d+)$`).FindStringSubmatch(string(out))
			if err != nil || m == nil {
				t.Fatalf("the helper's turn without a crash: %v, %q", err, out)
			}
			n, _ := strconv.Atoi(m[1])
			if n < 7 { // the session's append, the index's, and five files of the record at least
				t.Fatalf("the helper's turn without a crash: %v, %q", err, out)
			}
			for k := 1; k <= n; k++ {
				dir := prepare()
				out, err := crashHelper(dir, k).CombinedOutput()
				var ee *exec.ExitError
				if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
					t.Fatalf("write %d of %d: the helper was not killed: %v\n%s", k, n, err, out)
				}
				checkAfterCrash(t, fmt.Sprintf("write %d of %d", k, n), dir, fresh)
			}
		})
	}
}

// crashHelper is the helper process on state, killed at write killAt.
func crashHelper(state string, killAt int) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashEnv+"=1", "CODA_STATE="+state, "CODA_KILL_AT="+strconv.Itoa(killAt))
	return cmd
}

// checkAfterCrash starts a store on dir as coda's next start does, and
// checks what the crash left.
func checkAfterCrash(t *testing.T, at, dir string, fresh bool) {
	t.Helper()
	st := store.New(dir)
	if err := st.Clean(); err != nil {
		t.Errorf("%s: Clean: %v", at, err)
	}
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(path, ".tmp") || strings.HasPrefix(d.Name(), ".")) {
			t.Errorf("%s: %s left after the next start", at, path)
		}
		return nil
	})
	var runs []string
	l, err := st.LoadSession("s-1", func(ex *store.Exchange) { runs = append(runs, ex.RunID) })
	switch {
	case fresh && errors.Is(err, store.ErrNoSession):
		// Killed before the new session's file was in place.
	case err != nil:
		t.Errorf("%s: the session does not load: %v", at, err)
		return
	case len(l.Warnings) != 0:
		t.Errorf("%s: loaded with warnings %q", at, l.Warnings)
	}
	want := []string{"r-0", "r-1"}
	if fresh {
		want = want[1:]
	}
	if n := len(runs); n > len(want) || strings.Join(runs, ",") != strings.Join(want[:n], ",") || !fresh && n == 0 {
		t.Errorf("%s: exchanges %q, want a whole prefix of %q", at, runs, want)
	}
	page, err := st.ListSessions("", nil, 50)
	if err != nil || (err == nil && l != nil && len(page.Sessions) != 1) {
		t.Errorf("%s: listed %+v, %v", at, page, err)
	}
	if l != nil {
		if err := l.Session.Append(l.State, exchange(2)); err != nil {
			t.Errorf("%s: the next turn's append: %v", at, err)
		}
	}
	if rr, err := st.ReadRun("r-crash"); err == nil && rr.Status != "running" && rr.Status != "answered" {
		t.Errorf("%s: run.json says %q", at, rr.Status)
	} else if err != nil && !strings.Contains(err.Error(), "no run") {
		t.Errorf("%s: the record: %v", at, err)
	}
}
