//go:build unix

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/store"
)

// Detached runs, ps, result --wait, cancel and resume (DESIGN §21), each
// through the real binary (the test binary as coda, which TestMain puts
// on PATH). Nothing waits on the clock: a test waits on the run's record
// (store.WaitRun, which watches it) or on a process's exit.

// fourStages is a blueprint of four stages, one after the other; the
// last answers.
const fourStages = `
[agent]
name = "four"
start = "one"

[stages.one]
mode = "autonomous"
[stages.one.transitions.two]
hint = "next"

[stages.two]
mode = "autonomous"
[stages.two.transitions.three]
hint = "next"

[stages.three]
mode = "autonomous"
[stages.three.transitions.four]
hint = "next"

[stages.four]
mode = "output"
available_tools = ["submit_output"]
`

// toStage is a script turn that says text and goes on to stage to.
func toStage(text, to string) string {
	return fmt.Sprintf("[[turn]]\ntext = %q\n[[turn.tool_calls]]\nname = \"transition\"\narguments = { to = %q, reason = \"done\" }\n\n", text, to)
}

// hangs is a script turn that streams for an hour.
const hangs = "[[turn]]\ndelay_ms = 3600000\ntext = [\"never\"]\n"

// codaEnv is a test's directory as coda's world: its home, config and
// state.
type codaEnv struct {
	t     *testing.T
	dir   string
	state string
}

func newCodaEnv(t *testing.T) *codaEnv {
	dir := t.TempDir()
	return &codaEnv{t: t, dir: dir, state: filepath.Join(dir, "state")}
}

func (c *codaEnv) write(name, text string) string {
	c.t.Helper()
	path := filepath.Join(c.dir, name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		c.t.Fatal(err)
	}
	return path
}

// coda runs coda with args in the test's directory, and returns its
// stdout, stderr and exit status.
func (c *codaEnv) coda(args ...string) (string, string, int) {
	c.t.Helper()
	bin, err := exec.LookPath("coda")
	if err != nil {
		c.t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = c.dir
	cmd.Env = append(os.Environ(), "HOME="+c.dir, "XDG_CONFIG_HOME="+filepath.Join(c.dir, ".config"), "XDG_STATE_HOME="+filepath.Join(c.dir, ".state"), "OLLAMA_HOST=127.0.0.1:1")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	var ee *exec.ExitError
	code := 0
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		c.t.Fatal(err)
	}
	return stdout.String(), stderr.String(), code
}

// detach starts a detached run and returns its id.
func (c *codaEnv) detach(args ...string) string {
	c.t.Helper()
	stdout, stderr, code := c.coda(append([]string{"run", "--detach", "--state-dir", c.state}, args...)...)
	id := strings.TrimSpace(stdout)
	if code != 0 || store.CheckRunID(id) != nil {
		c.t.Fatalf("coda run --detach: exit %d, stdout %q\nstderr:\n%s", code, stdout, stderr)
	}
	// Its process runs it (and said so) before --detach returned.
	rr, err := store.New(c.state).ReadRun(id)
	if err != nil || rr.Process == nil || !rr.Process.Detached {
		c.t.Fatalf("run %s right after --detach: %+v, %v", id, rr, err)
	}
	return id
}

// waitRun waits until the run's record is as done says.
func (c *codaEnv) waitRun(id string, done func(*store.RunRecord) bool) *store.RunRecord {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a hang detector only
	defer cancel()
	rr, err := store.New(c.state).WaitRun(ctx, id, done)
	if err != nil {
		c.t.Fatalf("waiting for run %s: %v", id, err)
	}
	return rr
}

// ps is `coda ps --json`, by run id.
func (c *codaEnv) ps() map[string]psRow {
	c.t.Helper()
	stdout, stderr, code := c.coda("ps", "--json", "--state-dir", c.state)
	if code != 0 {
		c.t.Fatalf("coda ps: exit %d\n%s", code, stderr)
	}
	var rows []psRow
	if err := json.Unmarshal([]byte(stdout), &rows); err != nil {
		c.t.Fatalf("coda ps --json: %v\n%s", err, stdout)
	}
	byID := map[string]psRow{}
	for _, r := range rows {
		byID[r.RunID] = r
	}
	return byID
}

// kill9 kills the run's process with SIGKILL and waits until the record
// shows it dead.
func (c *codaEnv) kill9(id string) {
	c.t.Helper()
	rr, err := store.New(c.state).ReadRun(id)
	if err != nil {
		c.t.Fatal(err)
	}
	if err := syscall.Kill(rr.Process.PID, syscall.SIGKILL); err != nil {
		c.t.Fatal(err)
	}
	c.waitRun(id, func(rr *store.RunRecord) bool { return !rr.Process.Alive() })
}

// `coda run --detach` returns with the run id, and `coda result RUN
// --wait` prints the answer with the exit status `coda run` gives the same
// run: 0 answered, 3 without an answer.
func TestDetach_resultWait(t *testing.T) {
	c := newCodaEnv(t)
	answers := c.write("answers.toml", `
[[turn]]
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "forty-two" }
`)
	silent := c.write("silent.toml", "[[turn]]\ntext = \"I would rather not answer.\"\n")
	noAnswer := c.write("noanswer.toml", "[stages.answer]\nmode = \"output\"\nanswer_from_reply = false\nmax_revisits = 0\n")
	for _, tt := range []struct {
		name string
		args []string
		want string
		code int
	}{
		{"answered", []string{"--model", "script:" + answers}, "forty-two", 0},
		{"no answer", []string{"--agent", noAnswer, "--model", "script:" + silent}, "", 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, _, runCode := c.coda(append(append([]string{"run", "--state-dir", c.state}, tt.args...), "Answer.")...)
			id := c.detach(append(tt.args, "Answer.")...)
			stdout, stderr, code := c.coda("result", id, "--wait", "--raw", "--state-dir", c.state)
			if code != tt.code || runCode != tt.code {
				t.Errorf("coda result --wait exited %d, coda run %d, want %d\nstderr:\n%s", code, runCode, tt.code, stderr)
			}
			if stdout != tt.want {
				t.Errorf("coda result --wait --raw printed %q, want %q", stdout, tt.want)
			}
			// The process wrote its output into the run's record.
			if _, err := os.Stat(filepath.Join(c.state, "runs", id, "stderr")); err != nil {
				t.Error(err)
			}
		})
	}
}

// `coda ps` shows a detached run in flight, in its stage, with its
// process; `coda cancel` stops it cleanly (its record says cancelled) and
// ps shows it ended; a run whose process got kill -9 is shown dead, never
// running.
func TestDetach_psCancelDead(t *testing.T) {
	c := newCodaEnv(t)
	blueprint := c.write("four.toml", fourStages)
	model := c.write("hang.toml", toStage("ONE-DONE", "two")+hangs)

	id := c.detach("--agent", blueprint, "--model", "script:"+model, "Go.")
	c.waitRun(id, func(rr *store.RunRecord) bool { return rr.Stage == "two" })
	row := c.ps()[id]
	if row.Status != "running" || row.Stage != "two" || row.Agent != "four" || row.Model != "script:"+model || row.PID <= 0 || !row.Detached {
		t.Errorf("ps of a run in flight: %+v", row)
	}
	stdout, stderr, code := c.coda("cancel", id, "--state-dir", c.state)
	if code != 0 || !strings.Contains(stdout, "cancelled") {
		t.Errorf("coda cancel: exit %d, %q\n%s", code, stdout, stderr)
	}
	rr, err := store.New(c.state).ReadRun(id)
	if err != nil || rr.Status != engine.StatusCancelled {
		t.Fatalf("run.json after cancel: %+v, %v", rr, err)
	}
	if row := c.ps()[id]; row.Status != engine.StatusCancelled || row.Ended == "" {
		t.Errorf("ps of a cancelled run: %+v", row)
	}

	killed := c.detach("--agent", blueprint, "--model", "script:"+model, "Go.")
	c.waitRun(killed, func(rr *store.RunRecord) bool { return rr.Stage == "two" })
	c.kill9(killed)
	if row := c.ps()[killed]; row.Status != statusDead {
		t.Errorf("ps of a run whose process was killed: %+v, want dead", row)
	}
	if _, stderr, code := c.coda("result", killed, "--wait", "--state-dir", c.state); code != 1 || !strings.Contains(stderr, "died") {
		t.Errorf("coda result --wait of a dead run: exit %d\n%s", code, stderr)
	}
	if _, stderr, code := c.coda("cancel", killed, "--state-dir", c.state); code != 1 || !strings.Contains(stderr, "dead") {
		t.Errorf("coda cancel of a dead run: exit %d\n%s", code, stderr)
	}
}

// `coda resume` of a run killed in its third stage runs from that stage
// on: the script it resumes with has the two calls stages three and four
// make, and nothing more, and its first call is shown what stages one and
// two said. A run still being run, one from another state directory and
// one whose blueprint changed are refused; one that answered is not
// resumed again.
func TestResume(t *testing.T) {
	c := newCodaEnv(t)
	c.write("four.toml", fourStages)
	c.write("model.toml", toStage("ONE-DONE", "two")+toStage("TWO-DONE", "three")+hangs)

	id := c.detach("--agent", "four.toml", "--model", "script:model.toml", "Go.")
	c.waitRun(id, func(rr *store.RunRecord) bool { return rr.Stage == "three" })
	c.kill9(id)

	// Refused: another state directory (a copy of this one), and a
	// changed blueprint.
	copied := filepath.Join(c.dir, "copied")
	if out, err := exec.Command("cp", "-R", c.state, copied).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v\n%s", err, out)
	}
	if _, stderr, code := c.coda("resume", id, "--state-dir", copied); code != 1 || !strings.Contains(stderr, "was recorded in") {
		t.Errorf("resume from another state directory: exit %d\n%s", code, stderr)
	}
	c.write("four.toml", fourStages+"\n[stages.four.output]\nformat = \"text\"\n")
	if _, stderr, code := c.coda("resume", id, "--state-dir", c.state); code != 1 || !strings.Contains(stderr, "changed since it ran") {
		t.Errorf("resume with a changed blueprint: exit %d\n%s", code, stderr)
	}
	c.write("four.toml", fourStages)

	// A resume that is cut short (cancelled in stage three) leaves the
	// run where it was; while it runs, a second resume is refused.
	c.write("model.toml", hangs)
	stdout, stderr, code := c.coda("resume", id, "--detach", "--state-dir", c.state)
	if code != 0 || strings.TrimSpace(stdout) != id {
		t.Fatalf("coda resume --detach: exit %d, %q\n%s", code, stdout, stderr)
	}
	if _, stderr, code := c.coda("resume", id, "--state-dir", c.state); code != 1 || !strings.Contains(stderr, "still running") {
		t.Errorf("a second resume while one runs: exit %d\n%s", code, stderr)
	}
	if _, stderr, code := c.coda("cancel", id, "--state-dir", c.state); code != 0 {
		t.Fatalf("coda cancel: exit %d\n%s", code, stderr)
	}

	// The resume that ends it: two calls, stages three and four.
	c.write("model.toml", `
[[turn]]
expect = "TWO-DONE"
text = "THREE-DONE"
[[turn.tool_calls]]
name = "transition"
arguments = { to = "four", reason = "done" }

[[turn]]
expect = "THREE-DONE"
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "the answer" }
`)
	stdout, stderr, code = c.coda("resume", id, "--state-dir", c.state)
	if code != 0 || stdout != "the answer\n" {
		t.Fatalf("coda resume: exit %d, %q\nstderr:\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "resuming run "+id+" at stage three (done: one, two)") {
		t.Errorf("coda resume did not say where it went on from:\n%s", stderr)
	}
	rr, err := store.New(c.state).ReadRun(id)
	if err != nil {
		t.Fatal(err)
	}
	if rr.Status != engine.StatusAnswered || rr.FinalOutput == nil || rr.FinalOutput.Content != "the answer" || len(rr.Resumes) != 2 || rr.Resumes[1].Stage != "three" {
		t.Errorf("run.json after the resume: status %s, answer %+v, resumes %+v", rr.Status, rr.FinalOutput, rr.Resumes)
	}
	// Stages one and two were visited once, by the first process.
	visits, _ := filepath.Glob(filepath.Join(c.state, "runs", id, "stages", "*"))
	count := map[string]int{}
	for _, v := range visits {
		_, name, _ := strings.Cut(filepath.Base(v), "-")
		count[name]++
	}
	if count["one@1"] != 1 || count["two@1"] != 1 || count["four@1"] != 1 {
		t.Errorf("the record's visits: %v", visits)
	}
	if _, stderr, code := c.coda("resume", id, "--state-dir", c.state); code != 1 || !strings.Contains(stderr, "already answered") {
		t.Errorf("resuming a run that answered: exit %d\n%s", code, stderr)
	}
}

// Several detached runs at once in one state directory, beside a
// foreground one: each record is its own, whole (DESIGN §18, §21).
func TestDetach_many(t *testing.T) {
	c := newCodaEnv(t)
	const n = 6
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		model := c.write(fmt.Sprintf("m%d.toml", i), fmt.Sprintf("[[turn]]\n[[turn.tool_calls]]\nname = \"submit_output\"\narguments = { content = \"answer %d\" }\n", i))
		wg.Go(func() { ids[i] = c.detach("--model", "script:"+model, fmt.Sprintf("Task %d.", i)) })
	}
	fg := c.write("fg.toml", "[[turn]]\n[[turn.tool_calls]]\nname = \"submit_output\"\narguments = { content = \"foreground\" }\n")
	if stdout, stderr, code := c.coda("run", "--raw", "--state-dir", c.state, "--model", "script:"+fg, "In front."); code != 0 || stdout != "foreground" {
		t.Errorf("the foreground run: exit %d, %q\n%s", code, stdout, stderr)
	}
	wg.Wait()
	for i, id := range ids {
		stdout, stderr, code := c.coda("result", id, "--wait", "--raw", "--state-dir", c.state)
		if code != 0 || stdout != fmt.Sprintf("answer %d", i) {
			t.Errorf("run %d (%s): exit %d, %q\n%s", i, id, code, stdout, stderr)
		}
		rr, err := store.New(c.state).ReadRun(id)
		if err != nil || rr.Prompt != fmt.Sprintf("Task %d.", i) {
			t.Errorf("run %d's record: %+v, %v", i, rr, err)
		}
	}
	rows := c.ps()
	for _, id := range ids {
		if rows[id].Status != engine.StatusAnswered {
			t.Errorf("ps of %s: %+v", id, rows[id])
		}
	}
	if len(rows) != n+1 {
		t.Errorf("ps lists %d runs, want %d", len(rows), n+1)
	}
}
