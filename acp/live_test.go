package acp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coda-acp/coda/acp"
	"github.com/coda-acp/coda/engine/blueprint"
	"github.com/coda-acp/coda/engine/provider/script"
	"github.com/coda-acp/coda/engine/tools"
	"github.com/coda-acp/coda/store"
)

// mcpAgent offers every MCP server's tools, as the bundled default agent
// does.
const mcpAgent = `
[agent]
name = "mcp"
[stages.answer]
mode = "output"
system_prompt = "Answer."
available_tools = ["read_file", "mcp"]
`

// liveConn is a served connection with a scripted model, outside a synctest
// bubble, for sessions with real processes in them (MCP servers).
type liveConn struct {
	*client
	t      *testing.T
	work   string
	served <-chan error
	logs   *strings.Builder
	logMu  *sync.Mutex
}

// log is what coda has logged so far.
func (m *liveConn) log() string {
	m.logMu.Lock()
	defer m.logMu.Unlock()
	return m.logs.String()
}

func serveLive(t *testing.T, model string, opts acp.Options, answers ...string) *liveConn {
	t.Helper()
	work, _ := filepath.EvalSymlinks(t.TempDir())
	agent := opts.Agent // the test's own, else mcpAgent
	if agent == nil {
		var err error
		if agent, err = blueprint.Parse([]byte(mcpAgent), "blueprint.toml"); err != nil {
			t.Fatal(err)
		}
	}
	sc, err := script.Parse([]byte(model), "model.toml")
	if err != nil {
		t.Fatal(err)
	}
	logs, logMu := &strings.Builder{}, &sync.Mutex{}
	opts.Agent, opts.UserModel, opts.Version = agent, "script:test", "test"
	e := testEngine(&opts)
	e.Tools, e.IDs = tools.Builtin(), counter()
	if e.Models == nil { // else the test's own, which wraps the script (scriptModel)
		e.Models = oneModel{script.New("script:test", sc)}
	}
	if e.Store == nil {
		e.Store = store.New(t.TempDir())
	}
	if opts.MCPStartWait == 0 {
		// A prompt waits for its servers as long as a loaded machine may
		// take to start them: only a hang would run out.
		opts.MCPStartWait = time.Minute
	}
	e.Log = slog.New(slog.NewTextHandler(lockedWriter{logs, logMu}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	srv, err := acp.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	c, served := serve(t, context.Background(), srv, work, parseAnswers(t, []byte(strings.Join(answers, "\n"))))
	m := &liveConn{client: c, t: t, work: work, served: served, logs: logs, logMu: logMu}
	t.Cleanup(func() {
		m.end()
		if t.Failed() {
			t.Logf("coda's log:\n%s", m.log())
		}
	})
	m.send([]byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`))
	m.await(`"id":0`)
	return m
}

// end closes coda's stdin and waits until Serve has returned: every
// server stopped.
func (m *liveConn) end() {
	select {
	case <-m.readDone:
		return
	default:
	}
	m.closeInput()
	select {
	case err := <-m.served:
		if err != nil {
			m.t.Errorf("Serve: %v", err)
		}
	case <-time.After(time.Minute):
		m.t.Fatalf("Serve did not return within a minute of stdin closing")
	}
	m.wait()
}

// request sends a request and waits for its answer.
func (m *liveConn) request(id int, method string, params any) string {
	m.t.Helper()
	p, _ := json.Marshal(params)
	m.do(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, p))
	return m.answer(id)
}

// answer waits for the response to request id.
func (m *liveConn) answer(id int) string {
	m.t.Helper()
	prefix := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,`, id)
	m.await(prefix)
	return m.find(prefix)
}

// find is the last line coda sent that holds text; "" when none.
func (m *liveConn) find(text string) string {
	lines, _ := m.lines()
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.Contains(lines[i], text) {
			return lines[i]
		}
	}
	return ""
}
