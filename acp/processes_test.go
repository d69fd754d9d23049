package acp

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// The helper processes of the tests that run several coda processes on one
// state directory: the test binary again, running TestHelperProcess with
// what to do in its environment.
const helperEnv = "CODA_ACP_TEST_HELPER"

// TestHelperProcess is a coda process of another test: it loads the session
// CODA_SESSION of the state directory CODA_STATE and runs CODA_TURNS turns
// in it, "turn NAME-I". It does nothing when run as a test.
func TestHelperProcess(t *testing.T) {
	if os.Getenv(helperEnv) != "turns" {
		t.Skip("a helper of other tests")
	}
	state, id, name := os.Getenv("CODA_STATE"), os.Getenv("CODA_SESSION"), os.Getenv("CODA_NAME")
	turns, _ := strconv.Atoi(os.Getenv("CODA_TURNS"))
	srv := testServer(t, state, Options{})
	handle(t, srv, ofLoader((*loader).resumeSession), fmt.Sprintf(`{"sessionId":%q,"cwd":%q,"mcpServers":[]}`, id, os.Getenv("CODA_CWD")))
	for i := range turns {
		promptAndWait(t, srv, id, fmt.Sprintf("turn %s-%d", name, i))
	}
}

// helper starts a helper process.
func helper(t *testing.T, env ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(append(os.Environ(), helperEnv+"=turns"), env...)
	return cmd
}

// replayed loads session id in a new server over state and returns the
// prompts its replay shows, in order.
func replayed(t *testing.T, state, id, cwd string) []string {
	t.Helper()
	srv := testServer(t, state, Options{})
	var out strings.Builder
	srv.conn.Close()
	srv.conn = srv.newConn(strings.NewReader(""), &out)
	handle(t, srv, ofLoader((*loader).loadSession), fmt.Sprintf(`{"sessionId":%q,"cwd":%q,"mcpServers":[]}`, id, cwd))
	srv.conn.Close()
	srv.conn = srv.newConn(strings.NewReader(""), io.Discard) // for the test's cleanup to close
	var prompts []string
	for _, m := range regexp.MustCompile(`"user_message_chunk","content":\{"type":"text","text":"(turn [^"]*)"`).FindAllStringSubmatch(out.String(), -1) {
		prompts = append(prompts, m[1])
	}
	return prompts
}

// Two coda processes with one session open, 100 turns each (two editor
// windows): every exchange is kept, none interleaved with another, each
// process's in the order it wrote them (issue 23: 68 of the 200 were lost
// when each process rewrote the file from its own copy).
func TestSession_twoProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("200 turns in two processes")
	}
	state, cwd := t.TempDir(), t.TempDir()
	srv := testServer(t, state, Options{})
	id := handle(t, srv, (*Server).newSession, fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, cwd)).SessionID
	const turns = 100
	var wg sync.WaitGroup
	for _, name := range []string{"a", "b"} {
		cmd := helper(t, "CODA_STATE="+state, "CODA_SESSION="+id, "CODA_CWD="+cwd, "CODA_NAME="+name, "CODA_TURNS="+strconv.Itoa(turns))
		wg.Go(func() {
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("process %s: %v\n%s", name, err, out)
			}
		})
	}
	wg.Wait()
	prompts := replayed(t, state, id, cwd)
	next := map[string]int{}
	for _, p := range prompts {
		name, i, _ := strings.Cut(strings.TrimPrefix(p, "turn "), "-")
		if n, _ := strconv.Atoi(i); n != next[name] {
			t.Errorf("%s: process %s's turn %d comes where its %d should", p, name, n, next[name])
		}
		next[name]++
	}
	if len(prompts) != 2*turns || next["a"] != turns || next["b"] != turns {
		t.Errorf("the session keeps %d exchanges (a %d, b %d), want %d", len(prompts), next["a"], next["b"], 2*turns)
	}
}

// A crash mid-append leaves the file's last line cut short: the session
// still loads, without that turn and with a warning; session/list notes
// it; the next turn's save cuts it off (issue 23: a file cut anywhere was
// refused).
func TestSession_tornTurn(t *testing.T) {
	state, cwd := t.TempDir(), t.TempDir()
	srv := testServer(t, state, Options{})
	id := handle(t, srv, (*Server).newSession, fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, cwd)).SessionID
	for i := range 3 {
		promptAndWait(t, srv, id, fmt.Sprintf("turn %d", i))
	}
	path := sessionFile(srv.load.store, id)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b[:len(b)-40], 0o600); err != nil {
		t.Fatal(err)
	}
	again := testServer(t, state, Options{})
	list := handle(t, again, ofLoader((*loader).listSessions), `{}`)
	if len(list.Sessions) != 1 || list.Sessions[0].Meta == nil || !strings.Contains(list.Sessions[0].Meta.Coda.Note, "cut short") {
		t.Errorf("session/list: %+v, want the session with a note", list.Sessions)
	}
	res := handle(t, again, ofLoader((*loader).loadSession), fmt.Sprintf(`{"sessionId":%q,"cwd":%q,"mcpServers":[]}`, id, cwd))
	if res.Meta == nil || len(res.Meta.Coda.Warnings) != 1 || !strings.Contains(res.Meta.Coda.Warnings[0], "cut short") {
		t.Errorf("session/load _meta: %+v, want the one warning", res.Meta)
	}
	if h := again.sessions[id].history; len(h) != 2 || h[1].Prompt != "turn 1" {
		t.Errorf("the restored history: %+v, want turns 0 and 1", h)
	}
	promptAndWait(t, again, id, "turn 3")
	if got := replayed(t, state, id, cwd); strings.Join(got, ",") != "turn 0,turn 1,turn 3" {
		t.Errorf("after the next turn: %q", got)
	}
	list = handle(t, testServer(t, state, Options{}), ofLoader((*loader).listSessions), `{}`)
	if list.Sessions[0].Meta != nil {
		t.Errorf("still noted after the next turn: %+v", list.Sessions[0].Meta)
	}
}
