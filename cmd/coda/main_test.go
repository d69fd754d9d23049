package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/coda-acp/coda/engine/lint"
	"github.com/coda-acp/coda/engine/tools"
	"github.com/coda-acp/coda/internal/catalog"
)

// TestMain lets the test binary be coda itself: testscript's `exec coda`
// runs the real main, with its os.Stdout swap and exit statuses.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){"coda": main})
}

// TestScripts runs the process contracts in testdata/script: flags and exit
// statuses, stdout carrying only JSON when serving, `coda run` and `coda
// result` output, the bundled agents, validate, demo and version.
func TestScripts(t *testing.T) {
	blueprints, err := filepath.Abs("../../testdata/blueprints")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			// Nothing may touch the real home: config, state and git all
			// live in the script's work directory.
			work := env.WorkDir
			env.Setenv("HOME", work)
			env.Setenv("XDG_CONFIG_HOME", filepath.Join(work, ".config"))
			env.Setenv("XDG_STATE_HOME", filepath.Join(work, ".state"))
			env.Setenv("GIT_CONFIG_NOSYSTEM", "1")
			env.Setenv("GIT_AUTHOR_NAME", "t")
			env.Setenv("GIT_AUTHOR_EMAIL", "t@example.com")
			env.Setenv("GIT_COMMITTER_NAME", "t")
			env.Setenv("GIT_COMMITTER_EMAIL", "t@example.com")
			env.Setenv("BLUEPRINTS", blueprints)
			// No local Ollama answers here (port 1 refuses at once), whatever
			// runs on the machine: a script without a model has none.
			env.Setenv("OLLAMA_HOST", "127.0.0.1:1")
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"jsonlines": cmdJSONLines,
			"status":    cmdStatus,
			"noinput":   cmdNoInput,
			"envsubst":  cmdEnvsubst,
			"setjson":   cmdSetJSON,
			"acp":       cmdACP,
		},
	})
}

// cmdJSONLines checks that every line of a file (or of the last command's
// stdout or stderr) is one JSON object, and that there is at least one:
//
//	jsonlines stdout
//
// With !, it checks that some line is not.
func cmdJSONLines(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: jsonlines FILE|stdout|stderr")
	}
	text := ts.ReadFile(args[0])
	bad := jsonLinesProblem(text)
	switch {
	case !neg && bad != "":
		ts.Fatalf("%s: %s", args[0], bad)
	case neg && bad == "":
		ts.Fatalf("%s: every line is a JSON object", args[0])
	}
}

// jsonLinesProblem says what keeps text from being JSON objects, one a
// line, each ending in a newline; "" when nothing does.
func jsonLinesProblem(text string) string {
	if text == "" {
		return "empty: no JSON lines"
	}
	if !strings.HasSuffix(text, "\n") {
		return "the last line has no newline"
	}
	for i, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		var v map[string]any
		dec := json.NewDecoder(strings.NewReader(line))
		if err := dec.Decode(&v); err != nil {
			return fmt.Sprintf("line %d is not a JSON object (%v): %.80q", i+1, err, line)
		}
		if dec.More() || dec.InputOffset() != int64(len(line)) {
			return fmt.Sprintf("line %d holds more than one JSON value: %.80q", i+1, line)
		}
	}
	return ""
}

// cmdStatus runs a program like exec and checks its exit status exactly:
//
//	status 2 coda --no-such-flag
func cmdStatus(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: status CODE PROGRAM [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("status: %q is not an exit code", args[0])
	}
	got := exitCode(ts.Exec(args[1], args[2:]...))
	if got < 0 {
		ts.Fatalf("%s did not run", args[1])
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}

func exitCode(err error) int {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	return -1
}

// scriptEnvNames are the variables programs started by custom commands see,
// from the script.
var scriptEnvNames = []string{
	"PATH", "HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "TMPDIR", "GORACE", "GOCOVERDIR",
	"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENROUTER_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "OLLAMA_HOST",
}

// cmdNoInput runs a program whose stdin is a pipe that stays open and
// never carries a byte, so a program that reads stdin before it exits
// hangs. It fails when the program is still running after 10 seconds; its
// stdout and stderr are the script's stdout and stderr afterwards. With !,
// the program must exit non-zero; without, zero.
//
//	! noinput coda --agent /nonexistent/x.toml
func cmdNoInput(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 1 {
		ts.Fatalf("usage: noinput PROGRAM [ARGS...]")
	}
	path, err := exec.LookPath(args[0])
	ts.Check(err)
	cmd := exec.Command(path, args[1:]...)
	cmd.Dir = ts.MkAbs(".")
	cmd.Env = scriptEnv(ts)
	pr, pw, err := os.Pipe()
	ts.Check(err)
	defer pw.Close() // held open until the program is done
	var stdout, stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = pr, &stdout, &stderr
	ts.Check(cmd.Start())
	pr.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(time.Minute): // a hang detector: only a program waiting for input takes it
		cmd.Process.Kill()
		<-done
		ts.Fatalf("%s was still running after a minute with stdin open: it waits for input instead of exiting", args[0])
	}
	fmt.Fprint(ts.Stdout(), stdout.String())
	fmt.Fprint(ts.Stderr(), stderr.String())
	switch code := exitCode(err); {
	case code < 0:
		ts.Fatalf("%s: %v", args[0], err)
	case neg && code == 0:
		ts.Fatalf("%s exited 0, want non-zero", args[0])
	case !neg && code != 0:
		ts.Fatalf("%s exited %d", args[0], code)
	}
}

// cmdACP plays an ACP client against a program it starts: it sends the
// lines of FILE one at a time, and after each request waits for the answer
// with its id (after a line that is not JSON, for an answer with id null).
// $VAR in a line is expanded from the script's environment, except
// $SESSION: the sessionId of the last session/new answer. Then it closes stdin and waits for the program to exit. The
// program's stdout and stderr become the script's; with !, the program
// must exit non-zero.
//
//	acp session.jsonl coda --model script:$WORK/model.toml
func cmdACP(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 {
		ts.Fatalf("usage: acp FILE PROGRAM [ARGS...]")
	}
	lines := strings.Split(strings.TrimRight(ts.ReadFile(args[0]), "\n"), "\n")
	path, err := exec.LookPath(args[1])
	ts.Check(err)
	cmd := exec.Command(path, args[2:]...)
	cmd.Dir = ts.MkAbs(".")
	cmd.Env = scriptEnv(ts)
	stdin, err := cmd.StdinPipe()
	ts.Check(err)
	out, err := cmd.StdoutPipe()
	ts.Check(err)
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	ts.Check(cmd.Start())
	defer cmd.Process.Kill()

	var stdout lockedBuffer
	received := make(chan map[string]any)
	go func() {
		defer close(received)
		r := bufio.NewReader(out)
		for {
			line, err := r.ReadString('\n')
			stdout.WriteString(line)
			if err != nil {
				return
			}
			var msg map[string]any
			if json.Unmarshal([]byte(line), &msg) == nil {
				received <- msg
			}
		}
	}()
	deadline := time.After(2 * time.Minute) // a hang detector, not a speed test
	session := ""
	for _, line := range lines {
		line = os.Expand(line, func(k string) string {
			if k == "SESSION" {
				return session
			}
			return ts.Getenv(k)
		})
		_, err := io.WriteString(stdin, line+"\n")
		ts.Check(err)
		var req map[string]any
		var wantID any // nil: an answer with id null
		if json.Unmarshal([]byte(line), &req) == nil {
			id, ok := req["id"]
			if !ok {
				continue // a notification: nothing comes back for it
			}
			wantID = id
		}
		for answered := false; !answered; {
			select {
			case msg, ok := <-received:
				if !ok {
					ts.Fatalf("%s closed stdout before answering %.100q\nstdout:\n%s\nstderr:\n%s", args[1], line, stdout.String(), stderr.String())
				}
				id, hasID := msg["id"]
				_, isResult := msg["result"]
				_, isError := msg["error"]
				if !hasID || (!isResult && !isError) || fmt.Sprint(id) != fmt.Sprint(wantID) {
					continue
				}
				answered = true
				if res, ok := msg["result"].(map[string]any); ok {
					if sid, ok := res["sessionId"].(string); ok {
						session = sid
					}
				}
			case <-deadline:
				ts.Fatalf("no answer to %.100q within 2 minutes\nstdout:\n%s\nstderr:\n%s", line, stdout.String(), stderr.String())
			}
		}
	}
	stdin.Close()
	for open := true; open; {
		select {
		case _, open = <-received:
		case <-deadline:
			ts.Fatalf("%s did not exit after stdin closed", args[1])
		}
	}
	err = cmd.Wait()
	fmt.Fprint(ts.Stdout(), stdout.String())
	fmt.Fprint(ts.Stderr(), stderr.String())
	switch code := exitCode(err); {
	case code < 0:
		ts.Fatalf("%s: %v", args[1], err)
	case neg && code == 0:
		ts.Fatalf("%s exited 0, want non-zero", args[1])
	case !neg && code != 0:
		ts.Fatalf("%s exited %d\nstderr:\n%s", args[1], code, stderr.String())
	}
}

// lockedBuffer is a strings.Builder safe to read while a goroutine writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) WriteString(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.WriteString(s)
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// scriptEnv is the environment a program started by a custom command
// sees: the variables the scripts set or pass on.
func scriptEnv(ts *testscript.TestScript) []string {
	var env []string
	for _, k := range scriptEnvNames {
		if v := ts.Getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// cmdEnvsubst expands $VAR and ${VAR} in files, in place, from the
// script's environment; an archive file cannot name $WORK itself.
func cmdEnvsubst(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: envsubst FILE...")
	}
	for _, f := range args {
		path := ts.MkAbs(f)
		data, err := os.ReadFile(path)
		ts.Check(err)
		ts.Check(os.WriteFile(path, []byte(os.Expand(string(data), ts.Getenv)), 0o666))
	}
}

// cmdSetJSON sets an environment variable to a string field of the JSON
// object the last command printed:
//
//	setjson RUNID runId
func cmdSetJSON(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: setjson VAR FIELD")
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(ts.ReadFile("stdout")), &obj); err != nil {
		ts.Fatalf("stdout is not a JSON object: %v", err)
	}
	s, ok := obj[args[1]].(string)
	if !ok || s == "" {
		ts.Fatalf("stdout has no string field %q", args[1])
	}
	ts.Setenv(args[0], s)
}

// Every bundled agent must validate without a single finding: they are
// what users copy.
func TestBundledAgents_Lint(t *testing.T) {
	names := bundledNames()
	for _, want := range []string{"data-analyst", "default", "researcher", "reviewer"} {
		found := false
		for _, n := range names {
			found = found || n == want
		}
		if !found {
			t.Errorf("bundled agent %q is missing; have %v", want, names)
		}
	}
	for _, name := range names {
		data, source, dir, err := readBlueprint(name)
		if err != nil {
			t.Fatal(err)
		}
		b, fs := lint.Source(data, source, dir, lint.Options{Tools: slices.Collect(maps.Keys(tools.Builtin())), NoTools: func(spec string) string { return catalog.Fact(spec).NoTools }})
		for _, f := range fs {
			if f.Code == lint.CodeNotStrict {
				continue // a schema not written for a strict subset is not wrong
			}
			t.Errorf("%s: %s", name, f)
		}
		if b == nil {
			continue
		}
		// DESIGN.md §2: every bundled agent ends in an output stage, and
		// every stage has a prompt written for a real model.
		for _, sn := range b.Order {
			s := b.Stages[sn]
			if len(s.TransitionOrder) == 0 && !s.OwesOutput() {
				t.Errorf("%s: stage %s ends the run without owing the answer", name, sn)
			}
			if len(strings.TrimSpace(s.SystemPrompt)) < 200 {
				t.Errorf("%s: stage %s has a thin system prompt (%d bytes)", name, sn, len(s.SystemPrompt))
			}
			if s.OwesOutput() && !strings.Contains(s.SystemPrompt, "submit_output") {
				t.Errorf("%s: stage %s owes the answer but its prompt never names submit_output", name, sn)
			}
			// DESIGN §15: a reply is an answer too; a prompt that says
			// otherwise invites commentary that becomes the answer.
			if s.OwesOutput() && s.AnswersFromReply() && strings.Contains(s.SystemPrompt, "only through") {
				t.Errorf("%s: stage %s takes replies as the answer, but its prompt says the answer goes only through submit_output", name, sn)
			}
		}
	}
}

func TestJSONLinesProblem(t *testing.T) {
	tests := []struct {
		text string
		ok   bool
	}{
		{"{\"a\":1}\n{\"b\":2}\n", true},
		{"", false},
		{"{\"a\":1}", false},
		{"{\"a\":1}\nnot json\n", false},
		{"{\"a\":1}{\"b\":2}\n", false},
		{"[1]\n", false},
		{"{\"a\":1}\n\n", false},
	}
	for _, tt := range tests {
		if got := jsonLinesProblem(tt.text); (got == "") != tt.ok {
			t.Errorf("jsonLinesProblem(%q) = %q, want ok=%v", tt.text, got, tt.ok)
		}
	}
}
