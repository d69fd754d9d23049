//go:build unix

package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/mcp/mcptest"
	"github.com/coda-acp/coda/store"
)

// Serving, a SIGTERM or SIGINT with turns in flight (stdin still open):
// every prompt is answered "cancelled", every run record is finished, the
// output is flushed, and coda exits 143 or 130. It runs the real binary
// (the test binary as coda, which TestMain puts on PATH).
func TestServe_signal(t *testing.T) {
	coda, err := exec.LookPath("coda")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		sig   syscall.Signal
		code  int
		turns int
	}{
		{syscall.SIGTERM, 143, 20},
		{syscall.SIGINT, 130, 3},
	}
	for _, tt := range tests {
		t.Run(tt.sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			state := filepath.Join(dir, "state")
			model := filepath.Join(dir, "model.toml")
			// Each turn would stream for an hour.
			script := strings.Repeat("[[turn]]\ndelay_ms = 3600000\ntext = [\"never\"]\n", tt.turns)
			if err := os.WriteFile(model, []byte(script), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(coda, "--model", "script:"+model, "--state-dir", state)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, ".config"), "XDG_STATE_HOME="+filepath.Join(dir, ".state"))
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			defer stdin.Close()
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			lines := readLines(stdout)
			// next returns the next line coda writes that contains substr;
			// its hang detector fires only when coda is stuck.
			next := func(substr string) string {
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
			send := func(format string, args ...any) {
				t.Helper()
				if _, err := fmt.Fprintf(stdin, format+"\n", args...); err != nil {
					t.Fatal(err)
				}
			}

			send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)
			next(`"id":"init"`)
			sessions := make([]string, tt.turns)
			for i := range sessions {
				send(`{"jsonrpc":"2.0","id":"new-%d","method":"session/new","params":{"cwd":%q,"mcpServers":[]}}`, i, dir)
				var resp struct {
					Result struct{ SessionID string } `json:"result"`
				}
				json.Unmarshal([]byte(next(fmt.Sprintf(`"id":"new-%d"`, i))), &resp)
				sessions[i] = resp.Result.SessionID
			}
			for i, id := range sessions {
				send(`{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"Go."}]}}`, i, id)
			}
			for range tt.turns {
				next(`"sessionUpdate":"plan"`) // the turn has started
			}

			if err := cmd.Process.Signal(tt.sig); err != nil {
				t.Fatal(err)
			}
			// The hang detector: coda stuck after the signal is killed, and
			// the checks below fail.
			hang := time.AfterFunc(time.Minute, func() { cmd.Process.Kill() })
			defer hang.Stop()
			answered := map[string]string{}
			for line := range lines {
				var m struct {
					ID     json.RawMessage `json:"id"`
					Result *struct {
						StopReason string `json:"stopReason"`
					} `json:"result"`
				}
				if json.Unmarshal([]byte(line), &m) == nil && m.Result != nil && len(m.ID) > 0 && m.ID[0] != '"' {
					if answered[string(m.ID)] != "" {
						t.Errorf("prompt %s answered twice", m.ID)
					}
					answered[string(m.ID)] = m.Result.StopReason
				}
			}
			err = cmd.Wait()
			var ee *exec.ExitError
			if code := 0; !errors.As(err, &ee) || ee.ExitCode() != tt.code {
				if ee != nil {
					code = ee.ExitCode()
				}
				t.Errorf("coda exited %d (%v), want %d\nstderr:\n%s", code, err, tt.code, stderr.String())
			}
			for i := range tt.turns {
				if got := answered[fmt.Sprint(i)]; got != "cancelled" {
					t.Errorf("prompt %d answered %q, want cancelled", i, got)
				}
			}
			runs, _ := filepath.Glob(filepath.Join(state, "runs", "*", "run.json"))
			if len(runs) != tt.turns {
				t.Errorf("%d run records, want %d", len(runs), tt.turns)
			}
			for _, run := range runs {
				rr, err := store.New(state).ReadRun(filepath.Base(filepath.Dir(run)))
				if err != nil {
					t.Fatal(err)
				}
				if rr.Status != engine.StatusCancelled {
					t.Errorf("%s: status %q, want cancelled", run, rr.Status)
				}
			}
		})
	}
}

// readLines sends each line r carries, and closes the channel at its end.
func readLines(r io.Reader) <-chan string {
	lines := make(chan string)
	go func() {
		defer close(lines)
		br := bufio.NewReader(r)
		for {
			line, err := br.ReadString('\n')
			if line != "" {
				lines <- line
			}
			if err != nil {
				return
			}
		}
	}()
	return lines
}

// A SIGTERM stops the sessions' MCP servers before coda exits, with what
// they started: no process is left behind.
func TestServe_signalStopsMCP(t *testing.T) {
	coda, err := exec.LookPath("coda")
	if err != nil {
		t.Fatal(err)
	}
	server := mcptest.Server(t)
	t.Cleanup(mcptest.Cleanup) // the only test here that builds it
	dir := t.TempDir()
	pidfile, model := filepath.Join(dir, "server.pid"), filepath.Join(dir, "model.toml")
	script := `
[[turn]]
[[turn.tool_calls]]
name = "test__spawn"
arguments = {}

[[turn]]
delay_ms = 3600000
text = ["never"]
`
	if err := os.WriteFile(model, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(coda, "--model", "script:"+model, "--state-dir", filepath.Join(dir, "state"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, ".config"), "XDG_STATE_HOME="+filepath.Join(dir, ".state"))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := readLines(stdout)
	next := func(substr string) string {
		t.Helper()
		hang := time.After(time.Minute) // a hang detector only
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
	send := func(s string) {
		t.Helper()
		if _, err := io.WriteString(stdin, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)
	next(`"id":0`)
	entry, _ := json.Marshal(map[string]any{"name": "test", "command": server, "args": []string{}, "env": []map[string]string{{"name": "CODA_MCP_PIDFILE", "value": pidfile}}})
	send(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":%q,"mcpServers":[%s]}}`, dir, entry))
	var created struct {
		Result struct{ SessionID string } `json:"result"`
	}
	json.Unmarshal([]byte(next(`"id":1`)), &created)
	send(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"Go."}]}}`, created.Result.SessionID))
	var ask struct {
		ID json.RawMessage `json:"id"`
	}
	json.Unmarshal([]byte(next(`"method":"session/request_permission"`)), &ask)
	send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"outcome":{"outcome":"selected","optionId":"allow_once"}}}`, ask.ID))
	var spawned struct {
		Params struct {
			Update struct {
				Content []struct {
					Content struct{ Text string } `json:"content"`
				} `json:"content"`
			} `json:"update"`
		} `json:"params"`
	}
	json.Unmarshal([]byte(next(`"status":"completed","content"`)), &spawned)
	pids := []int{mcptest.PID(t, pidfile)}
	if c := spawned.Params.Update.Content; len(c) == 1 {
		pid, err := strconv.Atoi(c[0].Content.Text)
		if err != nil {
			t.Fatalf("the spawn call said %q", c[0].Content.Text)
		}
		pids = append(pids, pid)
	}
	// The turn goes on, its next model call waiting an hour.

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	hang := time.AfterFunc(time.Minute, func() { cmd.Process.Kill() })
	defer hang.Stop()
	for range lines {
	}
	var ee *exec.ExitError
	if err := cmd.Wait(); !errors.As(err, &ee) || ee.ExitCode() != 143 {
		t.Errorf("coda exited %v, want status 143\nstderr:\n%s", err, stderr.String())
	}
	// The server was reaped before coda exited; what it started was
	// killed with its group, and may take a moment to die.
	if !mcptest.Gone(pids[0]) {
		syscall.Kill(pids[0], syscall.SIGKILL)
		t.Errorf("the MCP server %d is still there after coda exited", pids[0])
	}
	if len(pids) != 2 {
		t.Fatalf("the server's background process is unknown: %+v", spawned)
	}
	mcptest.WaitGone(t, pids[1])
}
