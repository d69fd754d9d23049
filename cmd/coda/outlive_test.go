//go:build unix

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/store"
)

// An editor killed mid-turn (both its pipes closed) does not take the turn
// with it (DESIGN §21): coda does not die of SIGPIPE, the turn runs on to
// its answer, the answer is recorded (marked that the client was gone) and
// appended to the session, coda exits, and a new coda's session/load
// replays the exchange with its answer. The model is a server in this test
// that holds its reply until the pipes are closed: no clock decides what
// happens when. The same holds when the client closes stdout alone; a
// SIGHUP (the terminal gone) does not end the turn either.
func TestServe_clientGone(t *testing.T) {
	for _, how := range []string{"both pipes", "stdout only", "SIGHUP"} {
		t.Run(how, func(t *testing.T) { testClientGone(t, how) })
	}
}

func testClientGone(t *testing.T, how string) {
	coda, err := exec.LookPath("coda")
	if err != nil {
		t.Fatal(err)
	}
	const answer = "The answer is 42."
	submit, _ := json.Marshal(map[string]string{"content": answer})
	gate := make(chan struct{}) // closed once the client is gone
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			io.WriteString(w, `{"object":"list","data":[]}`)
			return
		}
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		if calls.Add(1) > 1 {
			io.WriteString(w, e2eChunk(`{"content":"Submitted."}`, "stop")+"data: [DONE]\n\n")
			return
		}
		io.WriteString(w, e2eChunk(`{"role":"assistant","content":""}`, "")+e2eChunk(`{"content":"Working it out."}`, ""))
		w.(http.Flusher).Flush()
		select {
		case <-gate:
		case <-r.Context().Done():
			return
		}
		io.WriteString(w, e2eChunk(`{"content":" Still working."}`, "")+
			e2eChunk(fmt.Sprintf(`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"submit_output","arguments":%q}}]}`, submit), "")+
			e2eChunk(`{}`, "tool_calls")+"data: [DONE]\n\n")
	}))
	defer srv.Close()

	dir := t.TempDir()
	cfg, state := filepath.Join(dir, "config.toml"), filepath.Join(dir, "state")
	os.WriteFile(cfg, []byte(fmt.Sprintf("[providers.test]\nkind = \"openai\"\nbase_url = %q\napi_key_env = \"CODA_E2E_KEY\"\n", srv.URL+"/v1")), 0o600)
	start := func() (*exec.Cmd, io.WriteCloser, io.ReadCloser, *lockedBuffer) {
		cmd := exec.Command(coda, "--config", cfg, "--model", "test:some-model", "--state-dir", state)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, ".config"), "CODA_E2E_KEY=k")
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		stderr := &lockedBuffer{}
		cmd.Stderr = stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill() })
		return cmd, stdin, stdout, stderr
	}

	cmd, stdin, stdout, stderr := start()
	lines := readLines(stdout)
	next := nextLine(t, lines, stderr)
	send := func(s string) {
		t.Helper()
		if _, err := io.WriteString(stdin, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)
	next(`"id":0`)
	send(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":%q,"mcpServers":[]}}`, dir))
	var created struct {
		Result struct{ SessionID string } `json:"result"`
	}
	json.Unmarshal([]byte(next(`"id":1`)), &created)
	sid := created.Result.SessionID
	send(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"What is six times seven?"}]}}`, sid))
	next(`Working it out.`)

	hang := time.AfterFunc(time.Minute, func() { cmd.Process.Kill() }) // a hang detector only
	defer hang.Stop()
	gone := how != "SIGHUP"
	switch how {
	case "both pipes": // the editor is killed: its ends of the pipes close
		stdin.Close()
		stdout.Close()
	case "stdout only":
		stdout.Close()
	case "SIGHUP":
		if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		// Seen once coda answers a request sent after it.
		send(`{"jsonrpc":"2.0","id":3,"method":"session/list","params":{}}`)
		next(`"id":3`)
	}
	close(gate)
	if !gone {
		if reply := next(`"id":2`); !strings.Contains(reply, `"end_turn"`) {
			t.Errorf("the prompt's answer after SIGHUP: %s", reply)
		}
		stdin.Close()
	}
	for range lines {
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		t.Fatalf("coda ended with %v (it must outlive its client)\nstderr:\n%s", err, stderr.String())
	} else if err != nil {
		t.Fatal(err)
	}
	stdin.Close()

	// The run record: answered, the client gone.
	st := store.New(state)
	ids, err := st.RunIDs()
	if err != nil || len(ids) != 1 {
		t.Fatalf("runs %v, %v", ids, err)
	}
	rr, err := st.ReadRun(ids[0])
	if err != nil {
		t.Fatal(err)
	}
	if rr.Status != engine.StatusAnswered || rr.FinalOutput == nil || rr.FinalOutput.Content != answer || rr.ClientGone != gone {
		t.Errorf("run.json: status %q, answer %+v, clientGone %v; want answered %q, clientGone %v\nstderr:\n%s", rr.Status, rr.FinalOutput, rr.ClientGone, answer, gone, stderr.String())
	}

	// A new coda loads the session: the exchange is replayed, answer and
	// all.
	cmd2, stdin2, stdout2, stderr2 := start()
	lines2 := readLines(stdout2)
	next2 := nextLine(t, lines2, stderr2)
	send2 := func(s string) {
		t.Helper()
		if _, err := io.WriteString(stdin2, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	send2(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)
	next2(`"id":0`)
	send2(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"session/load","params":{"sessionId":%q,"cwd":%q,"mcpServers":[]}}`, sid, dir))
	prompt := next2(`"user_message_chunk"`)
	if !strings.Contains(prompt, "six times seven") {
		t.Errorf("replayed prompt: %s", prompt)
	}
	final := next2(`"final_answer"`)
	if !strings.Contains(final, answer) || !strings.Contains(final, rr.RunID) {
		t.Errorf("replayed answer: %s", final)
	}
	next2(`"id":1`)
	stdin2.Close()
	for range lines2 {
	}
	if err := cmd2.Wait(); err != nil {
		t.Errorf("the second coda: %v\nstderr:\n%s", err, stderr2.String())
	}
}

// nextLine returns a function that gives the next line coda writes that
// contains substr; its hang detector fires only when coda is stuck.
func nextLine(t *testing.T, lines <-chan string, stderr fmt.Stringer) func(substr string) string {
	return func(substr string) string {
		t.Helper()
		hang := time.After(time.Minute)
		for {
			select {
			case line, ok := <-lines:
				if !ok {
					t.Fatalf("coda closed stdout before sending %q\nstderr:\n%s", substr, stderr.String())
				}
				if strings.Contains(line, substr) {
					return line
				}
			case <-hang:
				t.Fatalf("coda never sent %q\nstderr:\n%s", substr, stderr.String())
			}
		}
	}
}
