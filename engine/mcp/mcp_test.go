package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/local"
	"github.com/coda-acp/coda/engine/mcp"
	"github.com/coda-acp/coda/engine/mcp/mcptest"
	"github.com/coda-acp/coda/engine/taint"
)

func TestMain(m *testing.M) {
	if bin := os.Getenv("CODA_MCP_TEST_HOLD"); bin != "" {
		hold(bin, os.Getenv("CODA_MCP_TEST_PIDFILE"), os.Getenv("CODA_MCP_TEST_CHILDFILE"))
	}
	if os.Getenv("CODA_MCP_TEST_DEEP") != "" {
		deepServer()
	}
	code := m.Run()
	mcptest.Cleanup()
	os.Exit(code)
}

// start starts the test server over stdio with the extra environment, and
// closes it when the test ends.
func start(t *testing.T, opts mcp.Options, env ...string) (*mcp.Conn, int) {
	t.Helper()
	bin := mcptest.Server(t)
	pidfile := filepath.Join(t.TempDir(), "pid")
	c, err := mcp.Start(context.Background(), mcp.Server{
		Name: "test", Command: bin, Dir: t.TempDir(), Env: append([]string{"CODA_MCP_PIDFILE=" + pidfile}, env...),
	}, opts)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(c.Close)
	return c, mcptest.PID(t, pidfile)
}

// tools are a conn's tools under their model names.
func tools(conns ...*mcp.Conn) map[string]engine.Tool {
	m := map[string]engine.Tool{}
	mcp.Tools(conns, m)
	return m
}

// approving is a workspace whose user allows every call, counting the
// questions.
func approving(t *testing.T, asked *atomic.Int32) engine.Workspace {
	return &local.Workspace{Dir: t.TempDir(), Approve: func(context.Context, engine.PermissionRequest) (bool, error) {
		if asked != nil {
			asked.Add(1)
		}
		return true, nil
	}}
}

func call(ctx context.Context, tool engine.Tool, ws engine.Workspace, args string, progress func(engine.ToolCallEvent)) engine.ToolResult {
	if progress == nil {
		progress = func(engine.ToolCallEvent) {}
	}
	return tool.Run(ctx, &engine.Call{ID: "t-1", Args: json.RawMessage(args), Workspace: ws, Progress: progress})
}

// The server's tools come under SERVER__TOOL names, with the kinds their
// annotations give; a call asks the user, runs on the server, and comes
// back as text.
func TestStart_stdioEcho(t *testing.T) {
	c, _ := start(t, mcp.Options{})
	m := tools(c)
	var names []string
	for n := range m {
		names = append(names, n)
	}
	slices.Sort(names)
	want := []string{"test__big", "test__block", "test__cancelled", "test__crash", "test__echo", "test__env", "test__fail", "test__grow", "test__mixed", "test__read", "test__spawn"}
	if !slices.Equal(names, want) {
		t.Fatalf("tools = %v, want %v", names, want)
	}
	kinds := map[string]string{"test__echo": "read", "test__fail": "edit", "test__block": "other"}
	for n, k := range kinds {
		if got := m[n].Kind(); got != k {
			t.Errorf("%s.Kind() = %q, want %q", n, got, k)
		}
	}
	echo := m["test__echo"]
	if server, tool := echo.(engine.MCPTool).MCP(); server != "test" || tool != "echo" {
		t.Errorf("MCP() = %q, %q", server, tool)
	}
	if e, ok := echo.(engine.Egress); !ok || !e.Egress() {
		t.Errorf("an MCP tool is not Egress")
	}
	spec := echo.Spec()
	if spec.Name != "test__echo" || spec.Description != "Echoes the text back" || !strings.Contains(string(spec.Schema), `"text"`) {
		t.Errorf("Spec() = %+v", spec)
	}
	var asked atomic.Int32
	var progressed []string
	res := call(context.Background(), echo, approving(t, &asked), `{"text":"hi"}`, func(p engine.ToolCallEvent) { progressed = append(progressed, p.Status) })
	if res.IsError || res.Output != "Echo: hi" {
		t.Fatalf("echo = %+v, want Echo: hi", res)
	}
	if asked.Load() != 1 || !slices.Equal(progressed, []string{engine.ToolInProgress}) {
		t.Errorf("asked %d times, progress %v; want once, then in_progress", asked.Load(), progressed)
	}
}

// A server that changes its tools says so (tools/list_changed): they are
// listed again, and offered under their names from then on.
func TestConn_toolsChanged(t *testing.T) {
	c, _ := start(t, mcp.Options{})
	relisted := mcp.Relisted(c)
	if res := call(context.Background(), tools(c)["test__grow"], approving(t, nil), `{"name":"late"}`, nil); res.IsError {
		t.Fatalf("grow = %+v", res)
	}
	select {
	case <-relisted:
	case <-time.After(time.Minute): // a hang detector only
		t.Fatal("the tools were not listed again within a minute of the change")
	}
	if !slices.Contains(c.ToolNames(), "late") {
		t.Fatalf("tools after the change = %v, want late among them", c.ToolNames())
	}
	res := call(context.Background(), tools(c)["test__late"], approving(t, nil), `{"text":"hi"}`, nil)
	if res.IsError || res.Output != "late: hi" {
		t.Errorf("the new tool = %+v", res)
	}
}

// A refusal is the model's to read, and the server is not called.
func TestTool_denied(t *testing.T) {
	c, _ := start(t, mcp.Options{})
	ws := &local.Workspace{Dir: t.TempDir()} // no Approve: every request denied
	res := call(context.Background(), tools(c)["test__spawn"], ws, `{}`, nil)
	if !res.IsError || !strings.Contains(res.Output, "The user denied test__spawn") {
		t.Fatalf("denied call = %+v", res)
	}
}

// An error result is a tool error; content other than text is named;
// arguments that are not an object are refused before anything is asked.
func TestTool_results(t *testing.T) {
	c, _ := start(t, mcp.Options{})
	m := tools(c)
	ws := approving(t, nil)
	if res := call(context.Background(), m["test__fail"], ws, `{}`, nil); !res.IsError || res.Output != "it failed on purpose" {
		t.Errorf("fail = %+v", res)
	}
	want := "a chart:\n[image image/png, 2 KB]\n[resource link file:///tmp/chart.png]"
	if res := call(context.Background(), m["test__mixed"], ws, `{}`, nil); res.IsError || res.Output != want {
		t.Errorf("mixed = %q, want %q", res.Output, want)
	}
	var asked atomic.Int32
	if res := call(context.Background(), m["test__echo"], approving(t, &asked), `["hi"]`, nil); !res.IsError || asked.Load() != 0 {
		t.Errorf("array arguments = %+v, asked %d", res, asked.Load())
	}
}

// Cancelling the turn cancels the call on the server too, and Run returns
// at once.
func TestTool_cancelled(t *testing.T) {
	c, _ := start(t, mcp.Options{})
	m := tools(c)
	started := filepath.Join(t.TempDir(), "started")
	mcptest.Fifo(t, started)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		mcptest.ReadLine(t, started) // the server is in the call
		cancel()
	}()
	res := call(ctx, m["test__block"], approving(t, nil), `{"started":"`+started+`"}`, nil)
	if !res.IsError || !strings.Contains(res.Output, "cancelled") {
		t.Fatalf("cancelled call = %+v", res)
	}
	// The server says so (it waits for the cancellation to arrive).
	if res := call(context.Background(), m["test__cancelled"], approving(t, nil), `{}`, nil); res.Output != "cancelled: 1" {
		t.Errorf("the server saw %q, want cancelled: 1", res.Output)
	}
}

// A call that takes longer than the timeout is abandoned with a tool
// error.
func TestTool_timeout(t *testing.T) {
	c, _ := start(t, mcp.Options{CallTimeout: 20 * time.Millisecond})
	res := call(context.Background(), tools(c)["test__block"], approving(t, nil), `{}`, nil)
	if !res.IsError || !strings.Contains(res.Output, "did not answer test__block within 20ms") {
		t.Fatalf("timed-out call = %+v", res)
	}
}

// A server gets the editor's variables and the few it needs from coda's
// environment, never coda's keys.
func TestStart_environment(t *testing.T) {
	t.Setenv("CODA_TEST_SECRET_KEY", "sk-coda")
	c, _ := start(t, mcp.Options{}, "GREETING=hello")
	env := tools(c)["test__env"]
	ws := approving(t, nil)
	for name, want := range map[string]string{"GREETING": "hello", "CODA_TEST_SECRET_KEY": "(unset)", "PATH": os.Getenv("PATH")} {
		if res := call(context.Background(), env, ws, `{"name":"`+name+`"}`, nil); res.Output != want {
			t.Errorf("the server's %s = %q, want %q", name, res.Output, want)
		}
	}
}

// A server that exits before it serves is an error saying how, with its
// stderr.
func TestStart_fails(t *testing.T) {
	bin := mcptest.Server(t)
	_, err := mcp.Start(context.Background(), mcp.Server{Name: "bad", Command: bin, Env: []string{"CODA_MCP_FAIL=no token configured"}}, mcp.Options{})
	if err == nil || !strings.Contains(err.Error(), "exited with status 1") || !strings.Contains(err.Error(), "no token configured") {
		t.Fatalf("Start = %v, want the exit status and the stderr line", err)
	}
	_, err = mcp.Start(context.Background(), mcp.Server{Name: "missing", Command: filepath.Join(t.TempDir(), "nope")}, mcp.Options{})
	if err == nil {
		t.Fatalf("Start of a missing command succeeded")
	}
}

// A server that dies ends its connection: Done closes and Err says why;
// its tools then say the server stopped.
func TestConn_dies(t *testing.T) {
	c, pid := start(t, mcp.Options{})
	m := tools(c)
	res := call(context.Background(), m["test__crash"], approving(t, nil), `{}`, nil)
	if !res.IsError || !strings.Contains(res.Output, "The MCP server test stopped during the test__crash call (it exited with status 3") {
		t.Errorf("crash = %+v", res)
	}
	<-c.Done()
	if err := c.Err(); err == nil || !strings.Contains(err.Error(), "exited with status 3") || !strings.Contains(err.Error(), "crashing on purpose") {
		t.Errorf("Err() = %v", err)
	}
	if !mcptest.Gone(pid) {
		t.Errorf("the crashed server %d is still there", pid)
	}
	if res := call(context.Background(), m["test__echo"], approving(t, nil), `{"text":"hi"}`, nil); !res.IsError || !strings.Contains(res.Output, "is not running") {
		t.Errorf("echo after the crash = %+v", res)
	}
}

// Close stops the server and what it started: no process is left.
func TestClose_noOrphans(t *testing.T) {
	c, pid := start(t, mcp.Options{})
	res := call(context.Background(), tools(c)["test__spawn"], approving(t, nil), `{}`, nil)
	child, err := strconv.Atoi(res.Output)
	if err != nil {
		t.Fatalf("spawn = %+v", res)
	}
	c.Close()
	if !mcptest.Gone(pid) {
		t.Errorf("after Close the server %d is still there", pid)
	}
	mcptest.WaitGone(t, child) // the sleep it started ends too
	if c.Err() != nil {
		t.Errorf("Err() after Close = %v, want nil", c.Err())
	}
	c.Close() // twice is fine
}

// A streamable HTTP server gets the editor's headers with every request.
func TestStart_http(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "web"}, nil)
	type args struct {
		Text string `json:"text"`
	}
	sdk.AddTool(srv, &sdk.Tool{Name: "echo"}, func(_ context.Context, _ *sdk.CallToolRequest, a args) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "Echo: " + a.Text}}}, nil, nil
	})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	var unauthorized atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok" {
			unauthorized.Add(1)
			http.Error(w, "no token", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()
	c, err := mcp.Start(context.Background(), mcp.Server{Name: "web", URL: ts.URL, Headers: http.Header{"Authorization": {"Bearer tok"}}}, mcp.Options{})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer c.Close()
	res := call(context.Background(), tools(c)["web__echo"], approving(t, nil), `{"text":"over http"}`, nil)
	if res.IsError || res.Output != "Echo: over http" || unauthorized.Load() != 0 {
		t.Fatalf("echo = %+v, %d unauthorized requests", res, unauthorized.Load())
	}
	if _, err := mcp.Start(context.Background(), mcp.Server{Name: "web", URL: ts.URL}, mcp.Options{}); err == nil {
		t.Errorf("Start without the header succeeded")
	}
}

// A result's sources, for the taint gate: the result as the content of each
// string argument that may be a path (the gate keeps the private ones), and
// an embedded resource's text as its URI's.
func TestTool_sources(t *testing.T) {
	c, _ := start(t, mcp.Options{})
	dir := t.TempDir()
	path := filepath.Join(dir, ".env")
	if err := os.WriteFile(path, []byte("KEY=v\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	args, _ := json.Marshal(map[string]string{"path": path})
	res := call(context.Background(), tools(c)["test__read"], approving(t, nil), string(args), nil)
	want := []taint.Source{{Path: path, Text: "KEY=v\n"}}
	if res.IsError || !slices.Equal(res.Sources, want) {
		t.Errorf("read's sources = %+v, want %+v", res.Sources, want)
	}
	res = call(context.Background(), tools(c)["test__mixed"], approving(t, nil), `{}`, nil)
	if len(res.Sources) != 0 {
		t.Errorf("mixed's sources = %+v, want none (a link carries nothing)", res.Sources)
	}
	embedded := &sdk.CallToolResult{Content: []sdk.Content{
		&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///w/.env", Text: "KEY=v\n"}},
		&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///w/key.pem", Blob: []byte{1}}},
	}}
	got := mcp.Sources(json.RawMessage(`{"n":3,"paths":["a.txt","multi\nline"]}`), embedded, "out")
	want = []taint.Source{{Path: "a.txt", Text: "out"}, {Path: filepath.FromSlash("/w/.env"), Text: "KEY=v\n"}}
	if !slices.Equal(got, want) {
		t.Errorf("sources = %+v, want %+v", got, want)
	}
}
