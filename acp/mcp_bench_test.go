package acp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coda-acp/coda/acp"
	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/blueprint"
	"github.com/coda-acp/coda/engine/mcp/mcptest"
	"github.com/coda-acp/coda/engine/provider/script"
	"github.com/coda-acp/coda/engine/tools"
)

// BenchmarkSessionNew measures session/new from request to answer, without
// MCP servers and with three that never finish starting (each waits at a
// FIFO no one opens): servers start in the background, so the answer does
// not wait for them. Each session is closed, untimed, which kills them.
//
//	go test ./acp -run '^$' -bench SessionNew -count 7 | benchstat -
func BenchmarkSessionNew(b *testing.B) {
	for _, n := range []int{0, 3} {
		b.Run(fmt.Sprintf("mcp=%d", n), func(b *testing.B) {
			bin := mcptest.Server(b)
			gate := filepath.Join(b.TempDir(), "gate")
			mcptest.Fifo(b, gate)
			var servers []map[string]any
			for i := range n {
				servers = append(servers, map[string]any{"name": fmt.Sprint("s", i), "command": bin, "args": []string{},
					"env": []map[string]string{{"name": "CODA_MCP_GATE", "value": gate}}})
			}
			params, _ := json.Marshal(map[string]any{"cwd": b.TempDir(), "mcpServers": servers})
			agent, err := blueprint.Parse([]byte(mcpAgent), "blueprint.toml")
			if err != nil {
				b.Fatal(err)
			}
			srv, err := acp.NewServer(acp.Options{Agent: agent, Engine: &engine.Engine{Models: oneModel{script.New("script:test", &script.Script{})}, Tools: tools.Builtin()}})
			if err != nil {
				b.Fatal(err)
			}
			toServer, w := io.Pipe()
			r, fromServer := io.Pipe()
			served := make(chan error, 1)
			go func() { served <- srv.Serve(context.Background(), toServer, fromServer); fromServer.Close() }()
			lines := bufio.NewScanner(r)
			id := 0
			call := func(method string, params any) string {
				id++
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", id, method, params)
				prefix := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,`, id)
				for lines.Scan() {
					if strings.HasPrefix(lines.Text(), prefix) {
						return lines.Text()
					}
				}
				b.Fatalf("coda ended before answering %s", method)
				return ""
			}
			call("initialize", `{"protocolVersion":1}`)
			b.ResetTimer()
			for range b.N {
				resp := call("session/new", params)
				b.StopTimer()
				var res struct {
					Result struct{ SessionID string } `json:"result"`
				}
				if err := json.Unmarshal([]byte(resp), &res); err != nil || res.Result.SessionID == "" {
					b.Fatalf("session/new: %s", resp)
				}
				call("session/close", fmt.Sprintf(`{"sessionId":%q}`, res.Result.SessionID))
				b.StartTimer()
			}
			b.StopTimer()
			w.Close()
			if err := <-served; err != nil {
				b.Fatal(err)
			}
		})
	}
}
