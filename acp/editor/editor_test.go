package editor

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/coda-acp/coda/acp/acptest"
	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/internal/jsonrpc"
	"github.com/coda-acp/coda/internal/rootfs"
)

// fakeClient is an editor on the other end of an in-memory connection. It
// records every request coda sends (each checked against the ACP schema) and
// answers through the handlers set for the test, each in its own goroutine,
// so a blocking wait_for_exit does not hold up the kill that ends it.
type fakeClient struct {
	t   *testing.T
	ctx context.Context // ends with the test
	mu  sync.Mutex
	// got lists the requests in arrival order.
	got []*clientRequest
	// answer answers a request; a nil answer replies {}.
	answer func(ctx context.Context, req *clientRequest) (any, error)

	wmu sync.Mutex
	w   io.WriteCloser // coda's stdin
}

// clientRequest is a request coda sent the editor.
type clientRequest struct {
	ID     json.RawMessage  `json:"id"`
	Method string           `json:"method"`
	Params *json.RawMessage `json:"params"`
}

// read reads what coda writes, answering each request.
func (c *fakeClient) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		line := append([]byte(nil), sc.Bytes()...)
		if err := acptest.Check(line, ""); err != nil {
			c.t.Errorf("coda sent a message the ACP schema refuses: %v\n%s", err, line)
		}
		var req clientRequest
		if err := json.Unmarshal(line, &req); err != nil || req.Method == "" {
			continue
		}
		c.mu.Lock()
		c.got = append(c.got, &req)
		answer := c.answer
		c.mu.Unlock()
		go c.reply(&req, answer)
	}
}

func (c *fakeClient) reply(req *clientRequest, answer func(context.Context, *clientRequest) (any, error)) {
	var (
		res any = map[string]any{}
		err error
	)
	if answer != nil {
		res, err = answer(c.ctx, req)
	}
	var msg any
	switch {
	case err != nil:
		var rpcErr *jsonrpc.ClientError
		if !errors.As(err, &rpcErr) {
			rpcErr = &jsonrpc.ClientError{Code: -32603, Message: err.Error()}
		}
		msg = map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": rpcErr}
	case res == nil:
		msg = map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": map[string]any{}}
	default:
		msg = map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": res}
	}
	line, _ := json.Marshal(msg)
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.w.Write(append(line, '\n'))
}

// hangUp closes coda's stdin, as an editor that goes away does.
func (c *fakeClient) hangUp() {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.w.Close()
}

func (c *fakeClient) requests() []*clientRequest {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*clientRequest(nil), c.got...)
}

func (c *fakeClient) methods() string {
	var ms []string
	for _, r := range c.requests() {
		ms = append(ms, r.Method)
	}
	return strings.Join(ms, " ")
}

// newClientPair connects a Workspace to a fake client over pipes,
// through a connection that takes no requests of its own.
func newClientPair(t *testing.T, caps string, answer func(context.Context, *clientRequest) (any, error)) (*Workspace, *fakeClient) {
	t.Helper()
	toCoda, clientW := io.Pipe()
	clientR, fromCoda := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	fc := &fakeClient{t: t, ctx: ctx, answer: answer, w: clientW}
	agent := jsonrpc.NewConn(jsonrpc.Options{}, toCoda, fromCoda)
	served := make(chan struct{})
	go func() {
		defer close(served)
		agent.Serve(context.Background(), func(_ context.Context, id json.RawMessage, method string, _ json.RawMessage) {
			if id != nil {
				agent.ReplyError(id, jsonrpc.CodeMethodNotFound, "coda takes no requests here", nil)
			}
		})
		fromCoda.Close()
	}()
	read := make(chan struct{})
	go func() { defer close(read); fc.read(clientR) }()
	t.Cleanup(func() {
		cancel()
		fc.hangUp()
		<-served
		<-read
	})
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var raw json.RawMessage
	if caps != "" {
		raw = json.RawMessage(caps)
	}
	ws := New(Options{Conn: agent, SessionID: "s-1", Cwd: dir, Additional: []string{"/extra"}, ClientCaps: raw, Timeout: time.Minute, ToolCall: toolCallStub})
	return ws, fc
}

func paramsOf(t *testing.T, req *clientRequest) map[string]any {
	t.Helper()
	var m map[string]any
	if req.Params == nil || json.Unmarshal(*req.Params, &m) != nil {
		t.Fatalf("%s has no object params", req.Method)
	}
	return m
}

const allCaps = `{"fs":{"readTextFile":true,"writeTextFile":true},"terminal":true}`

func TestClientCaps(t *testing.T) {
	tests := []struct {
		raw  string
		want clientCaps
	}{
		{"", clientCaps{}},
		{"null", clientCaps{}},
		{"{}", clientCaps{}},
		{allCaps, clientCaps{readTextFile: true, writeTextFile: true, terminal: true}},
		{`{"elicitation":{"form":{}}}`, clientCaps{elicitForm: true}},
		{`{"elicitation":{"url":{}}}`, clientCaps{}},
		{`{"elicitation":{"form":null}}`, clientCaps{}},
		{`{"fs":{"readTextFile":true}}`, clientCaps{readTextFile: true}},
		{`{"fs":{"readTextFile":"yes","writeTextFile":true},"terminal":1}`, clientCaps{writeTextFile: true}},
		{`{"fs":[],"terminal":true}`, clientCaps{terminal: true}},
		{`[1]`, clientCaps{}},
	}
	for _, tt := range tests {
		if got := parseClientCaps(json.RawMessage(tt.raw)); got != tt.want {
			t.Errorf("parseClientCaps(%s) = %+v, want %+v", tt.raw, got, tt.want)
		}
	}
}

func TestClientWorkspace_Roots(t *testing.T) {
	ws, _ := newClientPair(t, "", nil)
	if roots := ws.Roots(); len(roots) != 2 || roots[0] != ws.Cwd() || roots[1] != "/extra" {
		t.Errorf("Roots = %v", roots)
	}
}

func TestClientWorkspace_ReadThroughEditor(t *testing.T) {
	ws, fc := newClientPair(t, allCaps, func(_ context.Context, req *clientRequest) (any, error) {
		if req.Method == "fs/read_text_file" {
			return map[string]any{"content": "unsaved € text"}, nil
		}
		return nil, errors.New("unexpected")
	})
	path := filepath.Join(ws.Cwd(), "a.txt")
	if err := os.WriteFile(path, []byte("on disk"), 0o644); err != nil {
		t.Fatal(err)
	}
	text, err := ws.ReadTextFile(context.Background(), path)
	if err != nil || text != "unsaved € text" {
		t.Fatalf("ReadTextFile = %q, %v", text, err)
	}
	p := paramsOf(t, fc.requests()[0])
	if p["sessionId"] != "s-1" || p["path"] != path {
		t.Errorf("fs/read_text_file params = %v", p)
	}
	f, err := ws.OpenFile(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 5)
	if n, _ := f.ReadAt(buf, 8); f.Size() != int64(len("unsaved € text")) || string(buf[:n]) != "€ t" {
		t.Errorf("OpenFile window = %q, size %d", buf[:n], f.Size())
	}
	f.Close()
	if got := fc.methods(); got != "fs/read_text_file fs/read_text_file" {
		t.Errorf("calls = %s", got)
	}
}

func TestClientWorkspace_HugeFileReadFromDisk(t *testing.T) {
	ws, fc := newClientPair(t, allCaps, nil)
	path := filepath.Join(ws.Cwd(), "big.log")
	if err := os.WriteFile(path, []byte("start"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, engine.EditorReadLimit+1); err != nil {
		t.Skip(err)
	}
	f, err := ws.OpenFile(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 5)
	if _, err := f.ReadAt(buf, 0); err != nil || string(buf) != "start" || f.Size() != engine.EditorReadLimit+1 {
		t.Errorf("read %q, size %d, %v", buf, f.Size(), err)
	}
	if got := fc.methods(); got != "" {
		t.Errorf("a huge file went through the editor: %s", got)
	}
}

func TestClientWorkspace_EditorReadError(t *testing.T) {
	ws, _ := newClientPair(t, allCaps, func(context.Context, *clientRequest) (any, error) {
		return nil, &jsonrpc.ClientError{Code: -32002, Message: "resource not found"}
	})
	_, err := ws.ReadTextFile(context.Background(), filepath.Join(ws.Cwd(), "gone.txt"))
	if err == nil || !strings.Contains(err.Error(), "resource not found") {
		t.Errorf("err = %v, want the editor's message", err)
	}
}

func TestClientWorkspace_WriteThroughEditor(t *testing.T) {
	ws, fc := newClientPair(t, allCaps, nil)
	path := filepath.Join(ws.Cwd(), "sub", "new.txt")
	if err := ws.WriteTextFile(context.Background(), path, "hello"); err != nil {
		t.Fatal(err)
	}
	reqs := fc.requests()
	if len(reqs) != 1 || reqs[0].Method != "fs/write_text_file" {
		t.Fatalf("calls = %s", fc.methods())
	}
	if p := paramsOf(t, reqs[0]); p["path"] != path || p["content"] != "hello" || p["sessionId"] != "s-1" {
		t.Errorf("params = %v", p)
	}
	if _, err := os.Stat(path); err == nil {
		t.Error("the write went to disk as well as to the editor")
	}
}

func TestClientWorkspace_DiskWithoutCapabilities(t *testing.T) {
	ws, fc := newClientPair(t, `{"fs":{"readTextFile":false,"writeTextFile":false},"terminal":false}`, nil)
	path := filepath.Join(ws.Cwd(), "d", "x.txt")
	ctx := context.Background()
	if err := ws.WriteTextFile(ctx, path, "disk"); err != nil {
		t.Fatal(err)
	}
	if text, err := ws.ReadTextFile(ctx, path); err != nil || text != "disk" {
		t.Errorf("ReadTextFile = %q, %v", text, err)
	}
	f, err := ws.OpenFile(ctx, path)
	if err != nil || f.Size() != 4 {
		t.Fatalf("OpenFile: %v", err)
	}
	f.Close()
	res, err := ws.RunCommand(ctx, engine.Command{Line: "echo local; pwd", Timeout: 10 * time.Second})
	if err != nil || res.ExitCode != 0 || res.TerminalID != "" || !strings.Contains(res.Output, "local\n"+ws.Cwd()) {
		t.Errorf("RunCommand = %+v, %v", res, err)
	}
	if got := fc.methods(); got != "" {
		t.Errorf("the client was called without advertising: %s", got)
	}
}

// permissionAnswers answers session/request_permission with the given
// outcomes in turn.
func permissionAnswers(outcomes ...any) func(context.Context, *clientRequest) (any, error) {
	var mu sync.Mutex
	return func(_ context.Context, req *clientRequest) (any, error) {
		mu.Lock()
		defer mu.Unlock()
		if req.Method != "session/request_permission" || len(outcomes) == 0 {
			return nil, errors.New("unexpected " + req.Method)
		}
		o := outcomes[0]
		outcomes = outcomes[1:]
		if err, ok := o.(error); ok {
			return nil, err
		}
		return map[string]any{"outcome": o}, nil
	}
}

func selected(id string) map[string]any { return map[string]any{"outcome": "selected", "optionId": id} }

func permissionRequest(key string) engine.PermissionRequest {
	old := "before"
	return engine.PermissionRequest{Key: key, ToolCall: engine.ToolCallEvent{
		ID: "t-1", Title: "Write a.txt", Kind: "edit", Status: engine.ToolPending,
		RawInput:  []byte(`{"path":"a.txt","content":"after"}`),
		Locations: []engine.Location{{Path: "/w/a.txt", Line: 1}},
		Content: []engine.ToolContent{
			{Diff: &engine.Diff{Path: "/w/a.txt", OldText: &old, NewText: "after"}},
			{Diff: &engine.Diff{Path: "/w/new.txt", NewText: "fresh"}},
		},
	}}
}

// toolCallStub encodes a permission's tool call as acp does, its
// identity only (acp's TestToolCallObject holds the rest).
func toolCallStub(tc *engine.ToolCallEvent) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"toolCallId": tc.ID, "title": tc.Title, "kind": tc.Kind})
	return b
}

func TestClientWorkspace_Permission(t *testing.T) {
	ws, fc := newClientPair(t, "", permissionAnswers(
		selected("allow_once"),
		selected("reject_once"),
		map[string]any{"outcome": "cancelled"},
		selected("something_else"),
		selected("allow_always"),
		selected("reject_once"),
	))
	ctx := context.Background()
	steps := []struct {
		key  string
		want bool
	}{
		{"write_file", true},  // allow once
		{"write_file", false}, // reject
		{"write_file", false}, // cancelled
		{"write_file", false}, // an option coda did not offer
		{"write_file", true},  // allow always: remembered
		{"write_file", true},  // not asked
		{"write_file", true},  // not asked
		{"shell", false},      // another tool is asked again: reject
	}
	for i, s := range steps {
		ok, err := ws.RequestPermission(ctx, permissionRequest(s.key))
		if err != nil || ok != s.want {
			t.Errorf("step %d (%s): allowed = %v, %v; want %v", i, s.key, ok, err, s.want)
		}
	}
	reqs := fc.requests()
	if len(reqs) != 6 {
		t.Fatalf("asked %d times, want 6 (always remembered per tool)", len(reqs))
	}
	p := paramsOf(t, reqs[0])
	tc := p["toolCall"].(map[string]any)
	if p["sessionId"] != "s-1" || tc["toolCallId"] != "t-1" || tc["kind"] != "edit" || tc["title"] != "Write a.txt" {
		t.Errorf("toolCall = %v", tc)
	}
	var kinds []string
	for _, o := range p["options"].([]any) {
		kinds = append(kinds, o.(map[string]any)["kind"].(string))
	}
	if strings.Join(kinds, ",") != "allow_once,allow_always,reject_once" {
		t.Errorf("option kinds = %v", kinds)
	}
}

// A question that covers others (the taint gate's about a shell call)
// goes without asking only when its key and every covered key are allowed
// always; "allow always" remembers its own key alone.
func TestClientWorkspace_PermissionCovers(t *testing.T) {
	ws, fc := newClientPair(t, "", permissionAnswers(
		selected("allow_always"), // taint:shell, covering shell
		selected("allow_once"),   // again: shell is not allowed always
		selected("allow_always"), // shell's own
	))
	ctx := context.Background()
	covering := permissionRequest("taint:shell")
	covering.Covers = []string{"shell"}
	for i, req := range []engine.PermissionRequest{covering, covering, permissionRequest("shell"), covering} {
		if ok, err := ws.RequestPermission(ctx, req); !ok || err != nil {
			t.Errorf("step %d: allowed = %v, %v", i, ok, err)
		}
	}
	if n := len(fc.requests()); n != 3 {
		t.Errorf("asked %d times, want 3 (the last answered by both keys' always)", n)
	}
}

func TestClientWorkspace_PermissionCancelledTurn(t *testing.T) {
	// On the bubble's clock, "promptly" is exact: at the cancel, not later.
	synctest.Test(t, func(t *testing.T) {
		block := make(chan struct{})
		defer close(block)
		ws, _ := newClientPair(t, "", func(ctx context.Context, req *clientRequest) (any, error) {
			<-block // the user never answers
			return nil, nil
		})
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(50*time.Millisecond, cancel)
		start := time.Now()
		ok, err := ws.RequestPermission(ctx, permissionRequest("shell"))
		if ok || !errors.Is(err, context.Canceled) {
			t.Errorf("a cancelled turn's permission = %v, %v", ok, err)
		}
		if d := time.Since(start); d != 50*time.Millisecond {
			t.Errorf("gave up %s after the request, want at the cancel (50ms)", d)
		}
	})
	// A client that fails the request does not allow it either.
	ws2, _ := newClientPair(t, "", permissionAnswers(errors.New("no UI")))
	if ok, err := ws2.RequestPermission(context.Background(), permissionRequest("shell")); ok || err == nil {
		t.Errorf("a failed request = %v, %v", ok, err)
	}
}

// fakeTerminal plays an editor's terminal/* methods: the command "exits"
// with code 7 unless hang is set, in which case it runs until killed.
type fakeTerminal struct {
	hang   bool
	mu     sync.Mutex
	killed chan struct{}
}

func (ft *fakeTerminal) answer(ctx context.Context, req *clientRequest) (any, error) {
	switch req.Method {
	case "terminal/create":
		return map[string]any{"terminalId": "term-1"}, nil
	case "terminal/wait_for_exit":
		if ft.hang {
			select {
			case <-ft.killed:
			case <-ctx.Done():
			}
			return map[string]any{"exitCode": nil, "signal": "SIGKILL"}, nil
		}
		return map[string]any{"exitCode": 7, "signal": nil}, nil
	case "terminal/kill":
		ft.mu.Lock()
		defer ft.mu.Unlock()
		select {
		case <-ft.killed:
		default:
			close(ft.killed)
		}
		return nil, nil
	case "terminal/output":
		status := map[string]any{"exitCode": 7}
		if ft.hang {
			status = map[string]any{"exitCode": nil, "signal": "SIGKILL"}
		}
		return map[string]any{"output": "…last lines\n", "truncated": true, "exitStatus": status}, nil
	case "terminal/release":
		return nil, nil
	}
	return nil, errors.New("unexpected " + req.Method)
}

func TestClientWorkspace_Terminal(t *testing.T) {
	ft := &fakeTerminal{killed: make(chan struct{})}
	ws, fc := newClientPair(t, allCaps, ft.answer)
	var started []string
	var calledBeforeStart string
	res, err := ws.RunCommand(context.Background(), engine.Command{
		Line: "make test", Timeout: 10 * time.Second, OutputLimit: 1000,
		Started: func(id string) { started = append(started, id); calledBeforeStart = fc.methods() },
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 7 || res.TerminalID != "term-1" || res.Output != "…last lines\n" || !res.Truncated || res.TimedOut {
		t.Errorf("result = %+v", res)
	}
	if len(started) != 1 || started[0] != "term-1" || calledBeforeStart != "terminal/create" {
		t.Errorf("Started %v after %q", started, calledBeforeStart)
	}
	if got := fc.methods(); got != "terminal/create terminal/wait_for_exit terminal/output terminal/release" {
		t.Errorf("calls = %s", got)
	}
	p := paramsOf(t, fc.requests()[0])
	args, _ := json.Marshal(p["args"])
	if p["command"] != "/bin/sh" || string(args) != `["-c","make test"]` || p["cwd"] != ws.Cwd() || p["outputByteLimit"] != 1000.0 || p["sessionId"] != "s-1" {
		t.Errorf("terminal/create params = %v", p)
	}
	for _, r := range fc.requests()[1:] {
		if q := paramsOf(t, r); q["terminalId"] != "term-1" || q["sessionId"] != "s-1" {
			t.Errorf("%s params = %v", r.Method, q)
		}
	}
}

func TestClientWorkspace_TerminalTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ft := &fakeTerminal{hang: true, killed: make(chan struct{})}
		ws, fc := newClientPair(t, allCaps, ft.answer)
		start := time.Now()
		res, err := ws.RunCommand(context.Background(), engine.Command{Line: "sleep 1000", Timeout: 100 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d != 100*time.Millisecond {
			t.Errorf("a 100 ms timeout took %s", d)
		}
		if !res.TimedOut || res.Signal != "SIGKILL" || res.ExitCode != -1 {
			t.Errorf("result = %+v", res)
		}
		if got := fc.methods(); got != "terminal/create terminal/wait_for_exit terminal/kill terminal/output terminal/release" {
			t.Errorf("calls = %s", got)
		}
	})
}

func TestClientWorkspace_TerminalCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ft := &fakeTerminal{hang: true, killed: make(chan struct{})}
		ws, fc := newClientPair(t, allCaps, ft.answer)
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(50*time.Millisecond, cancel)
		res, err := ws.RunCommand(ctx, engine.Command{Line: "sleep 1000"})
		if !errors.Is(err, context.Canceled) || res.TimedOut {
			t.Errorf("RunCommand = %+v, %v; want cancelled", res, err)
		}
		// The terminal is still stopped and released.
		if got := fc.methods(); got != "terminal/create terminal/wait_for_exit terminal/kill terminal/output terminal/release" {
			t.Errorf("calls = %s", got)
		}
	})
}

// A silent editor cannot hang a turn: each file and terminal call gives up
// after the editor timeout and says so. A permission request is the
// exception: the user may think as long as the turn runs.
func TestClientWorkspace_editorTimeout(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	decided := make(chan struct{})
	ws, _ := newClientPair(t, allCaps, func(ctx context.Context, req *clientRequest) (any, error) {
		if req.Method == "session/request_permission" {
			<-decided // the user decides after the other calls timed out
			return map[string]any{"outcome": selected("allow_once")}, nil
		}
		<-block // never answers
		return nil, nil
	})
	ws.timeout = 20 * time.Millisecond
	ctx := context.Background()
	type answer struct {
		ok  bool
		err error
	}
	permission := make(chan answer, 1)
	go func() {
		ok, err := ws.RequestPermission(ctx, permissionRequest("shell"))
		permission <- answer{ok, err}
	}()

	path := filepath.Join(ws.Cwd(), "a.txt")
	calls := map[string]func() error{
		"fs/read_text_file":  func() error { _, err := ws.ReadTextFile(ctx, path); return err },
		"fs/write_text_file": func() error { return ws.WriteTextFile(ctx, path, "x") },
		"terminal/create": func() error {
			_, err := ws.RunCommand(ctx, engine.Command{Line: "true", Timeout: time.Minute})
			return err
		},
	}
	for method, call := range calls {
		err := call()
		if want := "the editor did not answer " + method + " within 20ms"; err == nil || err.Error() != want {
			t.Errorf("%s: err = %v, want %q", method, err, want)
		}
	}
	close(decided)
	if a := <-permission; !a.ok || a.err != nil {
		t.Errorf("a permission answered after the editor timeout = %v, %v; want allowed", a.ok, a.err)
	}
}

// When the editor disconnects (stdin ends), a call waiting for it fails at
// once, saying why, and so do calls made afterwards.
func TestClientWorkspace_disconnect(t *testing.T) {
	asked := make(chan struct{})
	block := make(chan struct{})
	defer close(block)
	ws, fc := newClientPair(t, allCaps, func(context.Context, *clientRequest) (any, error) {
		close(asked)
		<-block // the user never decides
		return nil, nil
	})
	errc := make(chan error, 1)
	go func() {
		_, err := ws.RequestPermission(context.Background(), permissionRequest("shell"))
		errc <- err
	}()
	<-asked
	fc.hangUp() // stdin ends
	want := "session/request_permission: the editor has disconnected (stdin closed), so it cannot answer"
	if err := <-errc; err == nil || err.Error() != want {
		t.Errorf("the waiting permission request: %v, want %q", err, want)
	}
	_, err := ws.ReadTextFile(context.Background(), filepath.Join(ws.Cwd(), "a.txt"))
	if want := "fs/read_text_file: the editor has disconnected (stdin closed), so it cannot answer"; err == nil || err.Error() != want {
		t.Errorf("a call after the disconnect: %v, want %q", err, want)
	}
}

// A file swapped for a symlink to outside the workspace while the user was
// asked is not handed to the editor to write, nor to read: its path is
// checked again just before the call.
func TestClientWorkspace_swappedBeforeEditorCall(t *testing.T) {
	ws, fc := newClientPair(t, allCaps, nil)
	outside, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(outside, "secret.txt")
	os.WriteFile(secret, []byte("keep"), 0o644)
	path := filepath.Join(ws.Cwd(), "f.txt")
	if err := os.Symlink(secret, path); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := ws.WriteTextFile(ctx, path, "pwned"); !errors.Is(err, rootfs.ErrOutside) {
		t.Errorf("WriteTextFile through a symlink to outside = %v, want ErrOutside", err)
	}
	if _, err := ws.ReadTextFile(ctx, path); !errors.Is(err, rootfs.ErrOutside) {
		t.Errorf("ReadTextFile through a symlink to outside = %v, want ErrOutside", err)
	}
	if got := fc.methods(); got != "" {
		t.Errorf("the editor was asked: %s", got)
	}
}

// The calls coda makes to the editor, as editor.go sends and reads them:
// representative params are what the schema defines for that method's
// params, and the result types read only members the schema's result
// definition names.
func TestClientCalls(t *testing.T) {
	term := terminalParams{SessionID: "s-1", TerminalID: "term-1"}
	calls := []struct {
		method string
		params any
		result any
	}{
		{"fs/read_text_file", readTextFileParams{SessionID: "s-1", Path: "/w/a.txt"}, readTextFileResult{}},
		{"fs/write_text_file", writeTextFileParams{SessionID: "s-1", Path: "/w/a.txt", Content: "hi"}, struct{}{}},
		{"session/request_permission", permissionParams{
			SessionID: "s-1", ToolCall: json.RawMessage(`{"toolCallId":"t-1","title":"Write a.txt","kind":"edit","status":"pending"}`),
			Options: []permissionOption{{optionAllowOnce, "Allow once", "allow_once"}, {optionAllowAlways, "Always allow", "allow_always"}, {optionRejectOnce, "Reject", "reject_once"}},
		}, permissionResult{}},
		{"terminal/create", createTerminalParams{SessionID: "s-1", Command: "sh", Args: []string{"-c", "ls"}, Cwd: "/w", OutputByteLimit: 1024}, createTerminalResult{}},
		{"terminal/wait_for_exit", term, terminalExit{}},
		{"terminal/output", term, terminalOutputResult{}},
		{"terminal/kill", term, struct{}{}},
		{"terminal/release", term, struct{}{}},
	}
	for _, c := range calls {
		t.Run(c.method, func(t *testing.T) {
			if err := acptest.CheckCall(c.method, jsonrpc.AppendJSON(nil, c.params)); err != nil {
				t.Errorf("%v\n  params: %s", err, jsonrpc.AppendJSON(nil, c.params))
			}
			def := acptest.CallResultDef(c.method)
			named, _, err := acptest.Members(def)
			if err != nil {
				t.Fatal(err)
			}
			rt := reflect.TypeOf(c.result)
			for i := range rt.NumField() {
				member, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
				if !slices.Contains(named, member) {
					t.Errorf("%s reads %q, which %s does not name (it names %q)", rt.Name(), member, def, named)
				}
			}
		})
	}
}
