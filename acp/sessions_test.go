package acp_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"

	"github.com/coda-acp/coda/acp"
	"github.com/coda-acp/coda/acp/acptest"
	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/blueprint"
	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/provider/script"
	"github.com/coda-acp/coda/engine/tools"
	"github.com/coda-acp/coda/outputspec"
	"github.com/coda-acp/coda/store"
)

var update = flag.Bool("update", false, "rewrite the expected agent lines (-- server --) of testdata/sessions/*.txtar")

// TestSessions runs the scripted sessions in testdata/sessions. Each archive
// holds:
//
//	-- blueprint.toml --   the agent (default: one output stage, "answer")
//	-- model.toml --       the script model (DESIGN.md §10)
//	-- launch.json --      the launch output spec, as _meta.coda.output spells it
//	-- options --          server options, KEY=VALUE a line: max_model_calls=N;
//	                       efforts=on (the effort option, over testEfforts' catalog)
//	-- answers --          canned answers to coda's requests: METHOD RESULT-JSON, one a line,
//	                       used in order per method (the last one repeats); METHOD - never
//	                       answers
//	-- files/PATH --       files put in the session's working directory ($WORK)
//	-- state/PATH --       files put in coda's state directory ($WORK in them expanded):
//	                       state/sessions/ID.json is a kept session
//	-- client --           what the client sends, one line each, in order. Directives:
//	                         await TEXT    wait until coda has sent a line containing TEXT
//	                         big N         send a request line of N bytes
//	                         hex HEX       send these bytes as a line
//	                         close         close stdin early
//	                         restart       close stdin, wait for coda to finish, and go on
//	                                       with a new coda over the same state directory
//	                                       (a restart: the same model and id counter)
//	-- server --           every line coda sends, in order ($WORK for the working directory,
//	                       $STATE for the state directory)
//
// Any other section, or a section twice, is an error. Every line coda sends
// is checked against the ACP schema.
//
// Each session runs in a synctest bubble: the script model's delays, the
// drain after stdin closes and await's hang detector run on the bubble's
// clock, which moves only when every goroutine is waiting. A model "still
// streaming" is still streaming however slow the machine is, and a 5 MiB
// line takes what it takes.
func TestSessions(t *testing.T) {
	files, err := filepath.Glob("../testdata/sessions/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no sessions in testdata/sessions (%v)", err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".txtar")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) { runSession(t, file) })
		})
	}
}

// sessionSections are the sections a session archive may have, besides
// files/PATH.
var sessionSections = map[string]bool{
	"blueprint.toml": true, "model.toml": true, "launch.json": true, "options": true,
	"answers": true, "client": true, "server": true,
}

// loadSession reads a session archive, refusing unknown and repeated
// sections (a misspelt section would otherwise be silently ignored).
func loadSession(file string) (*txtar.Archive, map[string][]byte, error) {
	ar, err := txtar.ParseFile(file)
	if err != nil {
		return nil, nil, err
	}
	sections := map[string][]byte{}
	for _, f := range ar.Files {
		if !sessionSections[f.Name] && !strings.HasPrefix(f.Name, "files/") && !strings.HasPrefix(f.Name, "state/") {
			return nil, nil, fmt.Errorf("%s: unknown section %q", file, f.Name)
		}
		if _, dup := sections[f.Name]; dup {
			return nil, nil, fmt.Errorf("%s: section %q appears twice", file, f.Name)
		}
		sections[f.Name] = f.Data
	}
	return ar, sections, nil
}

func TestLoadSession(t *testing.T) {
	tests := []struct{ archive, err string }{
		{"-- model.toml --\n-- client --\n-- server --\n-- files/a/b.txt --\nhi\n", ""},
		{"-- client --\n-- sever --\n", `unknown section "sever"`},
		{"-- client --\n-- client --\n", `section "client" appears twice`},
		{"-- files/a --\n-- files/a --\n", `section "files/a" appears twice`},
		{"-- state/sessions/s-1.json --\n{}\n", ""},
		{"-- state/sessions/s-1.json --\n{}\n-- statefoo --\n", `unknown section "statefoo"`},
	}
	for _, tt := range tests {
		file := filepath.Join(t.TempDir(), "s.txtar")
		if err := os.WriteFile(file, []byte(tt.archive), 0o644); err != nil {
			t.Fatal(err)
		}
		_, _, err := loadSession(file)
		if (err == nil) != (tt.err == "") || (err != nil && !strings.HasSuffix(err.Error(), tt.err)) {
			t.Errorf("loadSession(%q) = %v, want %q", tt.archive, err, tt.err)
		}
	}
}

// sessionOptions reads the options section: KEY=VALUE a line.
func sessionOptions(t *testing.T, data []byte) (maxCalls int, efforts bool) {
	t.Helper()
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		k, v, _ := strings.Cut(line, "=")
		switch k {
		case "max_model_calls":
			n, err := strconv.Atoi(v)
			if err != nil {
				t.Fatalf("options: %s: %v", line, err)
			}
			maxCalls = n
		case "efforts":
			efforts = v == "on"
		default:
			t.Fatalf("options: unknown option %q", line)
		}
	}
	return maxCalls, efforts
}

// testEfforts plays cmd/coda's catalog for the effort option: script:test
// reasons up to xhigh with no launch level, script:small takes low to high
// and is given medium, script:plain does not reason.
func testEfforts(spec string) ([]string, string) {
	switch spec {
	case "script:small":
		return []string{"low", "medium", "high"}, "medium"
	case "script:plain":
		return []string{"off"}, ""
	}
	return []string{"off", "low", "medium", "high", "xhigh"}, ""
}

const defaultBlueprint = `
[agent]
name = "test"
[stages.answer]
mode = "output"
system_prompt = "Answer the question."
available_tools = ["read_file", "list_files", "grep", "write_file", "edit_file", "shell"]
`

type oneModel struct{ m llm.Model }

func (o oneModel) Model(string) (llm.Model, error) { return o.m, nil }

// counter makes stable ids: s-1, r-1, m-1, m-2, t-1, ...
func counter() func(string) string {
	var mu sync.Mutex
	n := map[string]int{}
	return func(prefix string) string {
		mu.Lock()
		defer mu.Unlock()
		n[prefix]++
		return fmt.Sprintf("%s-%d", prefix, n[prefix])
	}
}

func runSession(t *testing.T, file string) {
	ar, sections, err := loadSession(file)
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	work, _ = filepath.EvalSymlinks(work)
	state := t.TempDir()
	for name, data := range sections {
		p := ""
		if rel, ok := strings.CutPrefix(name, "files/"); ok {
			p = filepath.Join(work, rel)
		}
		if rel, ok := strings.CutPrefix(name, "state/"); ok {
			p, data = filepath.Join(state, rel), []byte(strings.ReplaceAll(string(data), "$WORK", work))
		}
		if p != "" {
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	bp := sections["blueprint.toml"]
	if bp == nil {
		bp = []byte(defaultBlueprint)
	}
	agent, err := blueprint.Parse(bp, "blueprint.toml")
	if err != nil {
		t.Fatal(err)
	}
	agent.Dir = work
	var model llm.Model = script.New("script:test", &script.Script{})
	if m := sections["model.toml"]; m != nil {
		sc, err := script.Parse(m, "model.toml")
		if err != nil {
			t.Fatal(err)
		}
		model = script.New("script:test", sc)
	}
	var launch outputspec.Spec
	if l := sections["launch.json"]; l != nil {
		if launch, err = outputspec.ParseMeta(l); err != nil {
			t.Fatalf("launch.json: %v", err)
		}
	}
	maxCalls, efforts := sessionOptions(t, sections["options"])
	var logs bytes.Buffer
	var logMu sync.Mutex
	ids := counter()
	var effortsOf func(string) ([]string, string)
	if efforts {
		effortsOf = testEfforts
	}
	newServer := func() *acp.Server {
		srv, err := acp.NewServer(acp.Options{
			Agent: agent, Launch: launch, LaunchDir: work, UserModel: "script:test", Version: "test",
			Engine: &engine.Engine{
				Models: oneModel{model}, Tools: tools.Builtin(), Store: store.New(state),
				Log: slog.New(slog.NewTextHandler(lockedWriter{&logs, &logMu}, &slog.HandlerOptions{Level: slog.LevelDebug})),
				IDs: ids, MaxModelCalls: maxCalls, Agents: sessionAgents,
			},
			Models: &acptest.Models{EffortsFunc: effortsOf},
		})
		if err != nil {
			t.Fatal(err)
		}
		return srv
	}
	defer func() {
		if t.Failed() {
			logMu.Lock()
			t.Logf("coda's log:\n%s", logs.String())
			logMu.Unlock()
		}
	}()

	c, served := serve(t, context.Background(), newServer(), work, parseAnswers(t, sections["answers"]))
	c.restart = func() {
		c.closeInput()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
		c.wait()
		served = c.connect(context.Background(), newServer())
	}
	for _, line := range strings.Split(string(sections["client"]), "\n") {
		if t.Failed() {
			break
		}
		c.do(line)
	}
	c.closeInput()
	// Serve returns once every prompt is answered (a hang shows as the
	// bubble's deadlock, or as the drain timing out on its clock).
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
	c.wait()

	got := strings.Join(dropUsage(c.received), "\n")
	got = strings.ReplaceAll(got, work, "$WORK")
	got = strings.ReplaceAll(got, state, "$STATE")
	if got != "" {
		got += "\n"
	}
	if *update {
		for i := range ar.Files {
			if ar.Files[i].Name == "server" {
				ar.Files[i].Data = []byte(got)
			}
		}
		if sections["server"] == nil {
			ar.Files = append(ar.Files, txtar.File{Name: "server", Data: []byte(got)})
		}
		if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want := string(sections["server"])
	if diff := cmp.Diff(strings.Split(want, "\n"), strings.Split(got, "\n")); diff != "" {
		t.Errorf("coda's lines differ (-want +got):\n%s", diff)
	}
}

// serve runs srv.Serve over pipes, with a client playing the editor; the
// channel gets Serve's result once it returns.
func serve(t *testing.T, ctx context.Context, srv *acp.Server, work string, answers map[string][]string) (*client, <-chan error) {
	c := &client{t: t, work: work, methods: map[string]string{}, answers: answers}
	c.cond = sync.NewCond(&c.mu)
	return c, c.connect(ctx, srv)
}

// connect serves srv to the client over new pipes: the lines it sends go
// on after those already received.
func (c *client) connect(ctx context.Context, srv *acp.Server) <-chan error {
	toServer, clientW := io.Pipe()
	clientR, fromServer := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- srv.Serve(ctx, toServer, fromServer)
		fromServer.Close()
	}()
	c.wmu.Lock()
	c.w, c.inputClosed = clientW, false
	c.wmu.Unlock()
	c.mu.Lock()
	c.closed = false
	c.mu.Unlock()
	done := make(chan struct{})
	c.readDone = done
	go func() { c.read(clientR); close(done) }()
	return served
}

type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// client plays the editor's side of a session.
type client struct {
	t    *testing.T
	work string

	wmu         sync.Mutex
	w           io.WriteCloser
	inputClosed bool // after closeInput, answers to coda's requests are dropped

	mu       sync.Mutex
	cond     *sync.Cond
	received []string
	at       []time.Time // when each line was received
	seen     int         // received lines already matched by an await
	closed   bool
	methods  map[string]string // request id → method, for checking responses
	answers  map[string][]string
	readDone chan struct{}
	// restart, when set, starts a new coda over the same state (the
	// restart directive).
	restart func()
}

// closeInput closes coda's stdin.
func (c *client) closeInput() {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.inputClosed = true
	c.w.Close()
}

// wait waits until coda's stdout is closed and read to its end.
func (c *client) wait() { <-c.readDone }

// lines returns what coda has sent so far, and when each line came.
func (c *client) lines() ([]string, []time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.received...), append([]time.Time(nil), c.at...)
}

// noAnswer, as a canned answer, leaves coda's request unanswered: an
// editor that never answers (or a user who never decides).
const noAnswer = "-"

func parseAnswers(t *testing.T, data []byte) map[string][]string {
	out := map[string][]string{}
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		method, result, ok := strings.Cut(line, " ")
		if !ok || (result != noAnswer && !json.Valid([]byte(result))) {
			t.Fatalf("answers: %q is not METHOD RESULT-JSON or METHOD %s", line, noAnswer)
		}
		out[method] = append(out[method], result)
	}
	return out
}

func (c *client) send(b []byte) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.inputClosed {
		return
	}
	if _, err := c.w.Write(append(b, '\n')); err != nil {
		c.t.Errorf("writing to coda: %v", err)
	}
}

func (c *client) do(line string) {
	t := c.t
	trimmed := strings.TrimSpace(line)
	if trimmed == "" || strings.HasPrefix(trimmed, "#") {
		return
	}
	verb, arg, _ := strings.Cut(trimmed, " ")
	switch verb {
	case "await":
		c.await(strings.ReplaceAll(arg, "$WORK", c.work))
	case "big":
		n, _ := strconv.Atoi(arg)
		head := `{"jsonrpc":"2.0","id":"big","method":"coda/big","params":{"pad":"`
		pad := n - len(head) - 3
		c.send([]byte(head + strings.Repeat("a", max(pad, 0)) + `"}}`))
	case "hex":
		b, err := hex.DecodeString(arg)
		if err != nil {
			t.Fatalf("hex %q: %v", arg, err)
		}
		c.send(b)
	case "close":
		c.closeInput()
	case "restart":
		if c.restart == nil {
			t.Fatalf("restart: this client cannot restart coda")
		}
		c.restart()
	default:
		line = strings.ReplaceAll(trimmed, "$WORK", c.work)
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal([]byte(line), &m) == nil && m.Method != "" && len(m.ID) > 0 {
			c.mu.Lock()
			c.methods[string(m.ID)] = m.Method
			c.mu.Unlock()
		}
		c.send([]byte(line))
	}
}

// await waits until coda sends a line containing text, after the lines
// earlier awaits matched. Its hang detector runs on the bubble's clock: it
// fires only when nothing else can happen for a minute of it.
func (c *client) await(text string) {
	deadline := time.AfterFunc(time.Minute, func() {
		c.mu.Lock()
		c.closed = true
		c.cond.Broadcast()
		c.mu.Unlock()
	})
	defer deadline.Stop()
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		for i := c.seen; i < len(c.received); i++ {
			if strings.Contains(c.received[i], text) {
				c.seen = i + 1
				return
			}
		}
		if c.closed {
			c.t.Fatalf("await %q: coda never sent it; it sent:\n%s", text, strings.Join(c.received, "\n"))
		}
		c.cond.Wait()
	}
}

// read collects coda's lines, checks each against the ACP schema, and
// answers coda's own requests from the canned answers.
func (c *client) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := append([]byte(nil), sc.Bytes()...)
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if err := json.Unmarshal(line, &m); err != nil {
			c.t.Errorf("coda sent a line that is not JSON: %q", line)
		}
		c.mu.Lock()
		answering := c.methods[string(m.ID)]
		c.mu.Unlock()
		if m.Method != "" {
			answering = ""
		}
		if err := acptest.Check(line, answering); err != nil {
			c.t.Errorf("%v\n  line: %s", err, line)
		}
		c.mu.Lock()
		c.received = append(c.received, string(line))
		c.at = append(c.at, time.Now())
		c.cond.Broadcast()
		c.mu.Unlock()
		if m.Method != "" && len(m.ID) > 0 {
			c.answer(m.ID, m.Method)
		}
	}
	c.mu.Lock()
	c.closed = true
	c.cond.Broadcast()
	c.mu.Unlock()
}

func (c *client) answer(id json.RawMessage, method string) {
	c.mu.Lock()
	results := c.answers[method]
	var result string
	if len(results) > 0 {
		result = results[0]
		if len(results) > 1 {
			c.answers[method] = results[1:]
		}
	}
	c.mu.Unlock()
	var reply string
	switch result {
	case noAnswer:
		return
	case "":
		reply = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"the test client has no answer for %s"}}`, id, method)
	default:
		result = strings.ReplaceAll(result, "$WORK", c.work)
		reply = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, id, result)
	}
	go c.send([]byte(reply))
}

// sessionAgents loads the agents a session's blueprint spawns: blueprint
// files of the session (files/NAME), next to the blueprint.
func sessionAgents(name, fromDir string) (*blueprint.Blueprint, error) {
	data, err := os.ReadFile(filepath.Join(fromDir, name))
	if err != nil {
		return nil, err
	}
	b, err := blueprint.Parse(data, name)
	if err != nil {
		return nil, err
	}
	b.Dir = fromDir
	return b, nil
}

// dropUsage is lines without the prompt responses' usage, which the
// transcripts leave out: a script model's tokens are its requests' bytes,
// which every change to a prompt's wording would change in every
// transcript. Each line was checked against the schemas as it came
// (read); usage_test.go checks the usage itself.
func dropUsage(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		at := strings.Index(l, `,"usage":{`)
		if at < 0 || !strings.Contains(l, `"stopReason"`) {
			out[i] = l
			continue
		}
		depth, end := 0, len(l)
		for j := at + len(`,"usage":`); j < len(l); j++ {
			if l[j] == '{' {
				depth++
			} else if l[j] == '}' {
				depth--
				if depth == 0 {
					end = j + 1
					break
				}
			}
		}
		out[i] = l[:at] + l[end:]
	}
	return out
}
