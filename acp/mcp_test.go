package acp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coda-acp/coda/acp"
	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/blueprint"
	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/mcp/mcptest"
	"github.com/coda-acp/coda/engine/provider/script"
	"github.com/coda-acp/coda/engine/taint"
)

func TestMain(m *testing.M) {
	code := m.Run()
	mcptest.Cleanup()
	os.Exit(code)
}

// stdio is a stdio server entry for the test server.
func stdio(t *testing.T, name string, env ...[2]string) map[string]any {
	e := []map[string]string{}
	for _, v := range env {
		e = append(e, map[string]string{"name": v[0], "value": v[1]})
	}
	return map[string]any{"name": name, "command": mcptest.Server(t), "args": []string{}, "env": e}
}

func newSession(servers ...map[string]any) map[string]any {
	if servers == nil {
		servers = []map[string]any{}
	}
	return map[string]any{"cwd": "$WORK", "mcpServers": servers}
}

func prompt(session, text string) map[string]any {
	return map[string]any{"sessionId": session, "prompt": []map[string]string{{"type": "text", "text": text}}}
}

// The model calls an MCP server's tool by its SERVER__TOOL name: the user
// is asked (kind read: the server says the tool only reads), the call runs
// on the server, and its result goes back to the model. session/close
// stops the server: its process is gone when the close is answered.
func TestMCP_stdioToolCall(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pid")
	m := serveLive(t, `
[[turn]]
[[turn.tool_calls]]
name = "test__echo"
arguments = { text = "hi" }
[[turn.tool_calls]]
name = "test__echo"
arguments = { text = "again" }

[[turn]]
expect = "Echo: again"
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "The server said hi." }
`, acp.Options{}, `session/request_permission {"outcome":{"outcome":"selected","optionId":"allow_always"}}`)
	// The command relative to the session's directory, as a path with a
	// directory in it runs.
	server := stdio(t, "test", [2]string{"CODA_MCP_PIDFILE", pidfile})
	if err := os.Symlink(server["command"].(string), filepath.Join(m.work, "mcpserver")); err != nil {
		t.Fatal(err)
	}
	server["command"] = "./mcpserver"
	resp := m.request(1, "session/new", newSession(server))
	if strings.Contains(resp, "warnings") {
		t.Fatalf("session/new: %s", resp)
	}
	resp = m.request(2, "session/prompt", prompt("s-1", "Say hi through the server."))
	if !strings.Contains(resp, `"status":"answered"`) || !strings.Contains(resp, `"warnings":[]`) {
		t.Fatalf("prompt: %s", resp)
	}
	ask := m.find("session/request_permission")
	for _, want := range []string{`"title":"test: echo"`, `"kind":"read"`, `"rawInput":{"text":"hi"}`, `"Always allow test__echo in this session"`} {
		if !strings.Contains(ask, want) {
			t.Errorf("the permission request lacks %s: %s", want, ask)
		}
	}
	lines, _ := m.lines()
	asked, results := 0, 0
	for _, l := range lines {
		if strings.Contains(l, "session/request_permission") {
			asked++
		}
		// Every call asks, whatever its kind: it starts pending, as an
		// edit does, and goes in_progress once allowed.
		if strings.Contains(l, `"sessionUpdate":"tool_call",`) && strings.Contains(l, `"test: echo"`) && !strings.Contains(l, `"status":"pending"`) {
			t.Errorf("the call does not start pending: %s", l)
		}
		if strings.Contains(l, `"status":"completed","content":[{"type":"content","content":{"type":"text","text":"Echo: `) {
			results++
		}
	}
	if asked != 1 || results != 2 {
		t.Errorf("asked %d times (want 1: allowed always), %d echo results (want 2)", asked, results)
	}
	pid := mcptest.PID(t, pidfile)
	m.request(3, "session/close", map[string]any{"sessionId": "s-1"})
	if !mcptest.Gone(pid) {
		t.Errorf("the MCP server %d is still there after session/close was answered", pid)
	}
}

// When stdin ends, coda stops every session's servers before it returns:
// one that started, and one still starting.
func TestMCP_stdinEOF(t *testing.T) {
	dir := t.TempDir()
	ready, slow := filepath.Join(dir, "ready.pid"), filepath.Join(dir, "slow.pid")
	gate := filepath.Join(dir, "gate")
	mcptest.Fifo(t, gate)
	m := serveLive(t, `
[[turn]]
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "ok" }
`, acp.Options{})
	m.request(1, "session/new", newSession(stdio(t, "ready", [2]string{"CODA_MCP_PIDFILE", ready})))
	// A prompt: the agent offers MCP tools, so the turn waits for the
	// server to start.
	m.request(2, "session/prompt", prompt("s-1", "Go."))
	m.request(3, "session/new", newSession(stdio(t, "slow", [2]string{"CODA_MCP_PIDFILE", slow}, [2]string{"CODA_MCP_GATE", gate})))
	// Opening the gate to write waits for the slow server to be at it; it
	// stays shut while the test holds it open without writing.
	held, err := os.OpenFile(gate, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	pids := []int{mcptest.PID(t, ready), mcptest.PID(t, slow)}
	m.end()
	for _, pid := range pids {
		if !mcptest.Gone(pid) {
			t.Errorf("MCP server %d is still there after Serve returned", pid)
		}
	}
}

// session/new answers at once: servers start in the background, and the
// first prompt waits for them. Measured: session/new's answer with three
// servers that have not started against none.
func TestMCP_newDoesNotWait(t *testing.T) {
	dir := t.TempDir()
	var gates [3]string
	for i := range gates {
		gates[i] = filepath.Join(dir, fmt.Sprint("gate", i))
		mcptest.Fifo(t, gates[i])
	}
	m := serveLive(t, `
[[turn]]
[[turn.tool_calls]]
name = "slow__echo"
arguments = { text = "late" }

[[turn]]
expect = "Echo: late"
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "ok" }
`, acp.Options{}, `session/request_permission {"outcome":{"outcome":"selected","optionId":"allow_once"}}`)
	begun := time.Now()
	m.request(1, "session/new", newSession())
	none := time.Since(begun)
	begun = time.Now()
	m.request(2, "session/new", newSession(
		stdio(t, "slow", [2]string{"CODA_MCP_GATE", gates[0]}),
		stdio(t, "slow2", [2]string{"CODA_MCP_GATE", gates[1]}),
		stdio(t, "slow3", [2]string{"CODA_MCP_GATE", gates[2]}),
	))
	three := time.Since(begun)
	// Answered while every server still waits at its gate: the gate is
	// opened only now.
	t.Logf("session/new answered in %v with no MCP server, %v with three still starting", none, three)
	m.do(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s-2","prompt":[{"type":"text","text":"Go."}]}}`)
	// The editor shows what the prompt waits for: a call per server.
	for _, name := range []string{"slow", "slow2", "slow3"} {
		m.await(`"title":"Start MCP server ` + name + `","name":"start_mcp_server","kind":"other","status":"in_progress"`)
	}
	for _, gate := range gates {
		mcptest.Open(t, gate)
	}
	if resp := m.answer(3); !strings.Contains(resp, `"status":"answered"`) {
		t.Fatalf("prompt: %s", resp)
	}
	lines, _ := m.lines()
	started := 0
	for _, l := range lines {
		if strings.Contains(l, `"status":"completed","content":[{"type":"content","content":{"type":"text","text":"Started, with `) {
			started++
		}
	}
	if started != 3 {
		t.Errorf("%d servers shown started, want 3", started)
	}
}

// A prompt waits for the session's MCP servers only when its agent may use
// their tools: an agent none of whose stages offers mcp answers while a
// server is still held at its gate, and shows no server starting.
func TestMCP_notOfferedNoWait(t *testing.T) {
	gate := filepath.Join(t.TempDir(), "gate")
	mcptest.Fifo(t, gate)
	agent, err := blueprint.Parse([]byte("[agent]\nname = \"plain\"\n[stages.answer]\nmode = \"output\"\navailable_tools = [\"read_file\"]\n"), "blueprint.toml")
	if err != nil {
		t.Fatal(err)
	}
	m := serveLive(t, `
[[turn]]
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "ok" }
`, acp.Options{Agent: agent})
	m.request(1, "session/new", newSession(stdio(t, "slow", [2]string{"CODA_MCP_GATE", gate})))
	resp := m.request(2, "session/prompt", map[string]any{"sessionId": "s-1", "prompt": []any{map[string]any{"type": "text", "text": "Go."}}})
	if !strings.Contains(resp, `"status":"answered"`) {
		t.Fatalf("prompt: %s", resp)
	}
	if l := m.find("Start MCP server"); l != "" {
		t.Errorf("the prompt waited for a server its agent cannot use: %s", l)
	}
	mcptest.Open(t, gate)
}

// A wrong-typed mcpServers is -32602 naming the field; no session starts.
func TestMCP_invalidServers(t *testing.T) {
	m := serveLive(t, ``, acp.Options{})
	tests := []struct{ servers, field string }{
		{`{}`, "mcpServers: expected an array"},
		{`[1]`, "mcpServers[0]: expected an object"},
		{`[{"command":"x"}]`, "mcpServers[0].name is required"},
		{`[{"name":"a","command":"x"},{"name":"b"}]`, "mcpServers[1].command is required"},
		{`[{"name":"a","command":7}]`, "mcpServers[0].command: expected a string"},
		{`[{"name":"a","command":"x","args":"-v"}]`, "mcpServers[0].args: expected an array of strings"},
		{`[{"name":"a","command":"x","env":[{"name":"K","value":1}]}]`, "mcpServers[0].env[0].value: expected a string"},
		{`[{"name":"a","command":"x","env":{"K":"v"}}]`, "mcpServers[0].env: expected an array of {name, value} objects"},
		{`[{"name":"a","type":"http"}]`, "mcpServers[0].url is required"},
		{`[{"name":"a","type":"http","url":"ftp://x"}]`, `mcpServers[0].url: \"ftp://x\" is not an http or https URL`},
		{`[{"name":"a","type":"http","url":"http://x","headers":[{"value":"v"}]}]`, "mcpServers[0].headers[0].name is required"},
		{`[{"name":"a","type":"ws","url":"http://x"}]`, `mcpServers[0].type: unknown transport \"ws\"`},
	}
	for i, tt := range tests {
		line := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/new","params":{"cwd":"$WORK","mcpServers":%s}}`, i+1, tt.servers)
		m.do(line)
		resp := m.answer(i + 1)
		if !strings.Contains(resp, `"code":-32602`) || !strings.Contains(resp, tt.field) {
			t.Errorf("mcpServers %s: %s\n  want -32602 naming %s", tt.servers, resp, tt.field)
		}
	}
	resp := m.request(99, "session/prompt", prompt("s-1", "Go."))
	if !strings.Contains(resp, "unknown session") {
		t.Errorf("a refused session/new left a session behind: %s", resp)
	}
}

// A server that cannot start is a warning, never a failed session: one
// whose command does not exist in session/new's own response, one that
// exits in the next response; one that dies later in the prompt after.
func TestMCP_failingServers(t *testing.T) {
	m := serveLive(t, `
[[turn]]
[[turn.tool_calls]]
name = "ok__crash"
arguments = {}

[[turn]]
expect = "The MCP server ok stopped during the ok__crash call (it exited with status 3; its stderr ends: crashing on purpose)"
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "It crashed." }

[[turn]]
expect = "Again."
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "done" }
`, acp.Options{}, `session/request_permission {"outcome":{"outcome":"selected","optionId":"allow_once"}}`)
	missing := map[string]any{"name": "missing", "command": filepath.Join(t.TempDir(), "no-such-server"), "args": []string{}, "env": []any{}}
	created := m.request(1, "session/new", newSession(missing, stdio(t, "bad", [2]string{"CODA_MCP_FAIL", "no token configured"}), stdio(t, "ok")))
	if !strings.Contains(created, `"sessionId":"s-1"`) || !strings.Contains(created, "MCP server missing was not started") {
		t.Fatalf("session/new: %s", created)
	}
	resp := m.request(2, "session/prompt", prompt("s-1", "Crash it."))
	if !strings.Contains(resp, `"status":"answered"`) {
		t.Errorf("first prompt: %s", resp)
	}
	if strings.Contains(resp, "missing") {
		t.Errorf("a warning was given twice: %s", resp)
	}
	// bad exits in the background: its warning is in session/new's answer
	// when it failed before that was written, else in the prompt's; once.
	const bad = "MCP server bad failed to start: it exited with status 1; its stderr ends: no token configured"
	if n := strings.Count(created, bad) + min(strings.Count(resp, bad), 1); n != 1 {
		t.Errorf("bad's failure was told %d times, want once:\nsession/new: %s\nprompt: %s", n, created, resp)
	}
	resp = m.request(3, "session/prompt", prompt("s-1", "Again."))
	if !strings.Contains(resp, `"status":"answered"`) || !strings.Contains(resp, "MCP server ok stopped: it exited with status 3; its stderr ends: crashing on purpose; its tools are no longer offered") {
		t.Errorf("second prompt: %s", resp)
	}
	if !strings.Contains(m.log(), "MCP server ok stopped") {
		t.Errorf("the crash was not logged")
	}
}

// Cancelling a prompt cancels the MCP call in flight, on the server too.
func TestMCP_cancel(t *testing.T) {
	started := filepath.Join(t.TempDir(), "started")
	mcptest.Fifo(t, started)
	m := serveLive(t, fmt.Sprintf(`
[[turn]]
[[turn.tool_calls]]
name = "test__block"
arguments = { started = %q }

[[turn]]
[[turn.tool_calls]]
name = "test__cancelled"
arguments = {}

[[turn]]
expect = "cancelled: 1"
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "The server saw it." }
`, started), acp.Options{}, `session/request_permission {"outcome":{"outcome":"selected","optionId":"allow_always"}}`)
	m.request(1, "session/new", newSession(stdio(t, "test")))
	m.do(`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s-1","prompt":[{"type":"text","text":"Block."}]}}`)
	mcptest.ReadLine(t, started)
	m.do(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s-1"}}`)
	if resp := m.answer(2); !strings.Contains(resp, `"stopReason":"cancelled"`) {
		t.Fatalf("cancelled prompt: %s", resp)
	}
	if resp := m.request(3, "session/prompt", prompt("s-1", "Did it?")); !strings.Contains(resp, `"status":"answered"`) {
		t.Errorf("next prompt: %s", resp)
	}
}

// An http server (the SDK's streamable HTTP handler) gets the editor's
// headers, and its tools are called the same way.
func TestMCP_http(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "web"}, nil)
	type args struct {
		Text string `json:"text"`
	}
	sdk.AddTool(srv, &sdk.Tool{Name: "echo", Description: "Echoes"}, func(_ context.Context, _ *sdk.CallToolRequest, a args) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "Web echo: " + a.Text}}}, nil, nil
	})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	var refused atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Api-Key") != "k-123" {
			refused.Add(1)
			http.Error(w, "no key", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()
	m := serveLive(t, `
[[turn]]
[[turn.tool_calls]]
name = "web__echo"
arguments = { text = "over http" }

[[turn]]
expect = "Web echo: over http"
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "ok" }
`, acp.Options{}, `session/request_permission {"outcome":{"outcome":"selected","optionId":"allow_once"}}`)
	web := map[string]any{"type": "http", "name": "web", "url": ts.URL, "headers": []map[string]string{{"name": "X-Api-Key", "value": "k-123"}}}
	m.request(1, "session/new", newSession(web))
	resp := m.request(2, "session/prompt", prompt("s-1", "Echo over http."))
	if !strings.Contains(resp, `"status":"answered"`) || refused.Load() != 0 {
		t.Fatalf("prompt: %s (%d requests refused)", resp, refused.Load())
	}
	if ask := m.find("session/request_permission"); !strings.Contains(ask, `"kind":"other"`) {
		t.Errorf("permission request: %s", ask)
	}
}

// A prompt waits for a server still starting only so long: the response
// says its tools come later. session/close stops a server still starting.
func TestMCP_lateServer(t *testing.T) {
	dir := t.TempDir()
	pidfile, gate := filepath.Join(dir, "pid"), filepath.Join(dir, "gate")
	mcptest.Fifo(t, gate)
	m := serveLive(t, `
[[turn]]
expect = "Go."
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "ok" }
`, acp.Options{MCPStartWait: time.Millisecond})
	m.request(1, "session/new", newSession(stdio(t, "slow", [2]string{"CODA_MCP_PIDFILE", pidfile}, [2]string{"CODA_MCP_GATE", gate})))
	held, err := os.OpenFile(gate, os.O_WRONLY, 0) // the server is at its gate, and stays there
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	resp := m.request(2, "session/prompt", prompt("s-1", "Go."))
	if !strings.Contains(resp, `"status":"answered"`) || !strings.Contains(resp, "MCP server slow is still starting: its tools are offered from a later prompt") {
		t.Errorf("prompt: %s", resp)
	}
	if upd := m.find(`"toolCallId":"t-1","status":"failed"`); !strings.Contains(upd, "Still starting after 1ms: its tools are offered from a later prompt.") {
		t.Errorf("the wait for the server is not shown ended: %q", upd)
	}
	pid := mcptest.PID(t, pidfile)
	m.request(3, "session/close", map[string]any{"sessionId": "s-1"})
	if !mcptest.Gone(pid) {
		t.Errorf("the MCP server %d is still there after session/close was answered", pid)
	}
}

// The modes hold for MCP tools: read-only offers only those the server
// says are read-only (a destructive one is no tool of the turn), and
// auto-edit never answers for an MCP call, whatever its kind: the user is
// asked.
func TestMCP_modes(t *testing.T) {
	m := serveLive(t, `
[[turn]]
[[turn.tool_calls]]
name = "test__fail"
arguments = {}
[[turn.tool_calls]]
name = "test__echo"
arguments = { text = "read-only" }

[[turn]]
expect = "Echo: read-only"
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "Only reading." }

[[turn]]
[[turn.tool_calls]]
name = "test__fail"
arguments = {}

[[turn]]
expect = "The user denied test__fail"
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "Asked, and denied." }
`, acp.Options{},
		`session/request_permission {"outcome":{"outcome":"selected","optionId":"allow_once"}}`,
		`session/request_permission {"outcome":{"outcome":"selected","optionId":"reject_once"}}`)
	m.request(1, "session/new", newSession(stdio(t, "test")))
	m.request(2, "session/set_mode", map[string]any{"sessionId": "s-1", "modeId": "read-only"})
	resp := m.request(3, "session/prompt", prompt("s-1", "Look only."))
	if !strings.Contains(resp, `"status":"answered"`) {
		t.Fatalf("read-only prompt: %s", resp)
	}
	if refused := m.find(`There is no tool \"test__fail\" in this stage`); refused == "" {
		t.Errorf("read-only offered the destructive MCP tool")
	}
	m.request(4, "session/set_mode", map[string]any{"sessionId": "s-1", "modeId": "auto-edit"})
	resp = m.request(5, "session/prompt", prompt("s-1", "Do it."))
	if !strings.Contains(resp, `"status":"answered"`) {
		t.Fatalf("auto-edit prompt: %s", resp)
	}
	lines, _ := m.lines()
	var asked []string
	for _, l := range lines {
		if strings.Contains(l, "session/request_permission") {
			asked = append(asked, l)
		}
	}
	if len(asked) != 2 || !strings.Contains(asked[1], `"title":"test: fail","kind":"edit"`) {
		t.Errorf("permission requests = %q, want the echo's, then the destructive call's in auto-edit", asked)
	}
}

// An MCP call is a way off the machine: with the taint gate on (ask), one
// that carries a private file's key is one question, the call shown with
// the key masked; refused, the server is not called.
func TestMCP_taint(t *testing.T) {
	m := serveLive(t, `
[[turn]]
[[turn.tool_calls]]
name = "read_file"
arguments = { path = ".env" }

[[turn]]
[[turn.tool_calls]]
name = "test__echo"
arguments = { text = "API_KEY=sk-proj-4fGh82kLmN0pQrStUvWxYz12f3" }

[[turn]]
expect = "so it was not run: the user declined it"
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "Not sent." }
`, acp.Options{Engine: &engine.Engine{Taint: taint.Launch{Policy: taint.Ask}}},
		`session/request_permission {"outcome":{"outcome":"selected","optionId":"reject_once"}}`)
	if err := os.WriteFile(filepath.Join(m.work, ".env"), []byte("API_KEY=sk-proj-4fGh82kLmN0pQrStUvWxYz12f3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	m.request(1, "session/new", newSession(stdio(t, "test")))
	if resp := m.request(2, "session/prompt", prompt("s-1", "Send the key.")); !strings.Contains(resp, `"status":"answered"`) {
		t.Fatalf("prompt: %s", resp)
	}
	lines, _ := m.lines()
	var asked []string
	for _, l := range lines {
		if strings.Contains(l, "session/request_permission") {
			asked = append(asked, l)
		}
		if strings.Contains(l, "Echo: ") {
			t.Errorf("the server was called: %s", l)
		}
	}
	if len(asked) != 1 {
		t.Fatalf("%d permission requests, want 1: %q", len(asked), asked)
	}
	for _, want := range []string{`"title":"test: echo (sends content read from .env)"`, `"rawInput":{"text":"API_KEY=sk-…f3"}`, `"Always allow test__echo to carry private content in this session"`} {
		if !strings.Contains(asked[0], want) {
			t.Errorf("the question lacks %s: %s", want, asked[0])
		}
	}
	if strings.Contains(asked[0], "sk-proj-") || strings.Contains(m.log(), "sk-proj-") {
		t.Errorf("the question or the log holds the key")
	}
}

// What an MCP server reads of a private file taints the run as read_file
// does: the call named the path, so its result is that file's content.
func TestMCP_taintSource(t *testing.T) {
	m := serveLive(t, `
[[turn]]
[[turn.tool_calls]]
name = "test__read"
arguments = { path = ".env" }

[[turn]]
expect = "API_KEY=sk-proj-4fGh82kLmN0pQrStUvWxYz12f3"
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "The key is sk-proj-4fGh82kLmN0pQrStUvWxYz12f3." }

[[turn]]
expect = "This answer would carry content read from the private file .env, so it was not recorded: the taint policy is deny."
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "The key is in .env." }
`, acp.Options{Engine: &engine.Engine{Taint: taint.Launch{Policy: taint.Deny}}},
		`session/request_permission {"outcome":{"outcome":"selected","optionId":"allow_always"}}`)
	if err := os.WriteFile(filepath.Join(m.work, ".env"), []byte("API_KEY=sk-proj-4fGh82kLmN0pQrStUvWxYz12f3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	m.request(1, "session/new", newSession(stdio(t, "test")))
	resp := m.request(2, "session/prompt", prompt("s-1", "Which key?"))
	if !strings.Contains(resp, `"content":"The key is in .env."`) {
		t.Errorf("prompt: %s\nwant the clean answer recorded", resp)
	}
}

// toolCounter is the script model, counting the tools each request offers.
type toolCounter struct {
	llm.Model
	mu     sync.Mutex
	counts []int
	names  [][]string
}

func (c *toolCounter) Stream(ctx context.Context, req *llm.Request, onDelta func(llm.Delta) error) (*llm.Response, error) {
	c.mu.Lock()
	var names []string
	for _, ts := range req.Tools {
		names = append(names, ts.Name)
	}
	c.counts, c.names = append(c.counts, len(req.Tools)), append(c.names, names)
	c.mu.Unlock()
	return c.Model.Stream(ctx, req, onDelta)
}

// A session with an MCP server of 300 tools offers 128 tools in all in
// each model request (config.toml's [mcp] max_tools, by default), coda's
// own among them: the cap counts what the request carries, not only the
// session's tools. One warning names the tools left out.
func TestMCP_toolsCapped(t *testing.T) {
	const model = `
[[turn]]
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "ok" }
`
	sc, err := script.Parse([]byte(model), "model.toml")
	if err != nil {
		t.Fatal(err)
	}
	counter := &toolCounter{Model: script.New("script:test", sc)}
	m := serveLive(t, model, acp.Options{Engine: &engine.Engine{Models: oneModel{counter}}})
	m.request(1, "session/new", newSession(stdio(t, "many", [2]string{"CODA_MCP_TOOLS", "300"})))
	resp := m.request(2, "session/prompt", prompt("s-1", "Go."))
	if !strings.Contains(resp, `"status":"answered"`) {
		t.Fatalf("prompt: %s", resp)
	}
	counter.mu.Lock()
	defer counter.mu.Unlock()
	if len(counter.counts) != 1 || counter.counts[0] != 128 {
		t.Fatalf("the model requests offered %v tools, want one request of 128", counter.counts)
	}
	for _, want := range []string{"read_file", "submit_output", "many__t00000"} {
		if !slices.Contains(counter.names[0], want) {
			t.Errorf("%s is not offered", want)
		}
	}
	// mcpAgent offers read_file and submit_output: 126 MCP tools of the
	// server's 311 (its 300 t… and 11 others).
	var r struct {
		Result struct {
			Meta struct {
				Coda struct{ Warnings []string } `json:"coda"`
			} `json:"_meta"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(resp), &r); err != nil {
		t.Fatal(err)
	}
	if w := r.Result.Meta.Coda.Warnings; len(w) != 1 || !strings.HasPrefix(w[0], "MCP: 185 tools were not offered to the model, past the 128 tools coda offers at once") {
		t.Errorf("the warnings = %q, want one naming the 185 tools left out", w)
	}
}
