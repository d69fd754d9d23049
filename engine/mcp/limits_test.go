package mcp_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coda-acp/coda/engine/mcp"
	"github.com/coda-acp/coda/engine/mcp/mcptest"
)

// An HTTP server's reply is capped as decoded: 256 MiB of text inflated from
// a gzip body of a few hundred KB is dropped at 16 MiB, the call fails
// saying so, and what the call allocated stays near the cap, not the reply.
func TestStart_httpReplyCapped(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "web"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "big"}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
		return nil, nil, fmt.Errorf("the test server answers big itself")
	})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, &sdk.StreamableHTTPOptions{JSONResponse: true})
	const inflated = 256 << 20
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(body, &m) != nil || m.Method != "tools/call" {
			r.Body = io.NopCloser(bytes.NewReader(body))
			h.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Encoding", "gzip")
		zw, _ := gzip.NewWriterLevel(w, gzip.BestSpeed)
		fmt.Fprintf(zw, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"`, m.ID)
		pad := bytes.Repeat([]byte("a"), 1<<20)
		for range inflated >> 20 {
			if _, err := zw.Write(pad); err != nil {
				return
			}
		}
		io.WriteString(zw, `"}]}}`)
		zw.Close()
	}))
	defer ts.Close()
	c, err := mcp.Start(context.Background(), mcp.Server{Name: "web", URL: ts.URL}, mcp.Options{})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer c.Close()
	tool := tools(c)["web__big"]
	ws := approving(t, nil)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	res := call(context.Background(), tool, ws, `{}`, nil)
	runtime.ReadMemStats(&after)
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("a reply of %d MiB inflated: the call allocated %.1f MiB", inflated>>20, float64(allocated)/(1<<20))
	if !res.IsError || !strings.Contains(res.Output, "over 16 MiB, the most coda reads of one MCP message") {
		t.Errorf("the call = %.300q, want it failed at the cap, saying so", res.Output)
	}
	if allocated > 96<<20 {
		t.Errorf("the call allocated %d MiB, want at most 96 MiB for a reply capped at 16 MiB", allocated>>20)
	}
}

// A stdio server dropped for a reply over the cap is said to be: not "exited
// with status 1 … broken pipe", but what coda did and why. So is one whose
// list of tools is over it, at start.
func TestConn_droppedForSize(t *testing.T) {
	c, _ := start(t, mcp.Options{})
	res := call(context.Background(), tools(c)["test__big"], approving(t, nil), `{"bytes":17000000}`, nil)
	const why = "coda stopped it: it sent a message over 16 MiB, the most coda reads of one MCP message"
	if !res.IsError || !strings.Contains(res.Output, why) {
		t.Errorf("the call = %.300q, want it to say %q", res.Output, why)
	}
	<-c.Done()
	if err := c.Err(); err == nil || !strings.Contains(err.Error(), why) || strings.Contains(err.Error(), "exited with status") {
		t.Errorf("Err() = %v, want %q", err, why)
	}

	bin := mcptest.Server(t)
	_, err := mcp.Start(context.Background(), mcp.Server{Name: "many", Command: bin, Dir: t.TempDir(),
		Env: []string{"CODA_MCP_TOOLS=300", "CODA_MCP_TOOL_DESC=60000"}}, mcp.Options{})
	const whyList = "coda stopped it: its list of tools is over 16 MiB, the most coda reads of one MCP message"
	if err == nil || !strings.Contains(err.Error(), whyList) {
		t.Errorf("Start = %v, want %q", err, whyList)
	}
}

// After coda is killed outright (kill -9), a stdio server that ignores its
// input's end dies too, and so does the child it started in its process
// group (Linux: the parent-death signal, to a guard that kills the group).
func TestStart_diesWithCoda(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the parent-death signal is Linux's")
	}
	bin := mcptest.Server(t)
	pidfile := filepath.Join(t.TempDir(), "pid")
	holder := exec.Command(os.Args[0], "-test.run=^$")
	childfile := filepath.Join(t.TempDir(), "child")
	holder.Env = append(os.Environ(), "CODA_MCP_TEST_HOLD="+bin, "CODA_MCP_TEST_PIDFILE="+pidfile, "CODA_MCP_TEST_CHILDFILE="+childfile)
	out, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	holder.Stderr = os.Stderr
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer holder.Process.Kill()
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "started\n" {
		t.Fatalf("the holder said %q, %v", line, err)
	}
	server, child := mcptest.PID(t, pidfile), mcptest.PID(t, childfile)
	if err := holder.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = holder.Wait()
	mcptest.WaitGone(t, server)
	mcptest.WaitGone(t, child)
}

// hold is the holder process of TestStart_diesWithCoda: it starts the
// server, ignoring its input's end, from a goroutine that then ends (the
// parent-death signal must not follow its thread), says so, and waits to be
// killed.
func hold(bin, pidfile, childfile string) {
	started := make(chan error)
	go func() {
		_, err := mcp.Start(context.Background(), mcp.Server{Name: "stubborn", Command: bin, Dir: os.TempDir(),
			Env: []string{"CODA_MCP_IGNORE_EOF=1", "CODA_MCP_PIDFILE=" + pidfile, "CODA_MCP_CHILD_PIDFILE=" + childfile}}, mcp.Options{})
		started <- err
	}()
	if err := <-started; err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("started")
	select {}
}

// A server whose list of tools coda cannot read (a schema nested 100,000
// deep, past what a JSON reader takes) is reported as stopped by coda,
// with why, not by how it exited once coda dropped it ("exited with
// status 1 … BrokenPipeError", as a Python server says it).
func TestStart_deepSchema(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the server is the test binary, run with an environment")
	}
	_, err := mcp.Start(context.Background(), mcp.Server{Name: "deep", Command: os.Args[0], Args: []string{"-test.run=^$"}, Dir: t.TempDir(),
		Env: []string{"CODA_MCP_TEST_DEEP=1"}}, mcp.Options{})
	if err == nil || !strings.Contains(err.Error(), "coda stopped it") || strings.Contains(err.Error(), "exited with status") {
		t.Errorf("Start = %v, want it stopped by coda, and why", err)
	}
}

// deepServer is the server of TestStart_deepSchema: it answers initialize,
// then lists one tool whose schema nests 100,000 deep, and says so on
// stderr and exits 1 when its output is gone, as a Python server would.
func deepServer() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	for in.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(in.Bytes(), &req) != nil || req.ID == nil {
			continue
		}
		var result string
		switch req.Method {
		case "initialize":
			result = `{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"deep","version":"1"}}`
		case "tools/list":
			const n = 100000
			result = `{"tools":[{"name":"deep","inputSchema":{"type":"object","properties":{"a":` + strings.Repeat(`{"properties":{"a":`, n) + `{}` + strings.Repeat(`}}`, n) + `}}}]}`
		default:
			result = `{}`
		}
		if _, err := fmt.Printf(`{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", req.ID, result); err != nil {
			fmt.Fprintln(os.Stderr, "BrokenPipeError: [Errno 32] Broken pipe")
			os.Exit(1)
		}
	}
	os.Exit(0)
}
