package mcp_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/mcp"
	"github.com/coda-acp/coda/engine/mcp/mcptest"
)

// events is a sink that keeps what it is given and signals each event.
type events struct {
	mu   sync.Mutex
	got  []engine.ToolCallEvent
	each chan struct{}
}

func (e *events) Emit(_ context.Context, ev engine.Event) error {
	e.mu.Lock()
	e.got = append(e.got, *ev.ToolCall)
	e.mu.Unlock()
	e.each <- struct{}{}
	return nil
}

func ids() func(string) string {
	n := 0
	return func(prefix string) string { n++; return fmt.Sprintf("%s-%d", prefix, n) }
}

// A turn waits for a server still starting, showing the wait as a tool
// call; the warnings of a server that could not start are given once.
func TestSet_turnWaitsForStarting(t *testing.T) {
	bin := mcptest.Server(t)
	gate := filepath.Join(t.TempDir(), "gate")
	mcptest.Fifo(t, gate)
	host := mcp.NewHost(mcp.Options{})
	defer host.Close()
	set := host.Start("s-1", []mcp.Server{
		{Name: "slow", Command: bin, Dir: t.TempDir(), Env: []string{"CODA_MCP_GATE=" + gate}},
		{Name: "missing", Command: filepath.Join(t.TempDir(), "no-such-server")},
	}, []string{"MCP server sse was not started: coda does not speak MCP's SSE transport"}, nil)

	warnings := set.Warnings()
	if len(warnings) != 2 || !strings.Contains(warnings[0], "sse was not started") || !strings.Contains(warnings[1], "missing was not started") {
		t.Errorf("Warnings = %q, want the caller's, then the missing command's", warnings)
	}
	sink := &events{each: make(chan struct{}, 4)}
	type turn struct {
		conns    []*mcp.Conn
		warnings []string
	}
	done := make(chan turn)
	go func() {
		conns, warnings := set.Turn(context.Background(), true, sink, ids())
		done <- turn{conns, warnings}
	}()
	<-sink.each // the wait is shown before the server is let go
	mcptest.Open(t, gate)
	got := <-done
	if len(got.conns) != 1 || got.conns[0].Name() != "slow" || len(got.warnings) != 0 {
		t.Errorf("Turn = %d servers, warnings %q; want slow and none (given already)", len(got.conns), got.warnings)
	}
	<-sink.each
	if len(sink.got) != 2 || sink.got[0].Title != "Start MCP server slow" || sink.got[0].Status != engine.ToolInProgress ||
		sink.got[1].ID != sink.got[0].ID || sink.got[1].Status != engine.ToolCompleted || !strings.HasPrefix(sink.got[1].Content[0].Text, "Started, with ") {
		t.Errorf("the wait was shown as %+v", sink.got)
	}
	// A turn that offers no MCP tools neither waits nor gets them.
	if conns, _ := set.Turn(context.Background(), false, sink, ids()); conns != nil {
		t.Errorf("a turn that offers no MCP tools got %d servers", len(conns))
	}
}

// Close stops every set's servers, one still starting too, and none
// starts after it: the set says why.
func TestHost_close(t *testing.T) {
	bin := mcptest.Server(t)
	dir := t.TempDir()
	pidfile, gate := filepath.Join(dir, "pid"), filepath.Join(dir, "gate")
	mcptest.Fifo(t, gate)
	host := mcp.NewHost(mcp.Options{})
	host.Start("s-1", []mcp.Server{{Name: "slow", Command: bin, Dir: dir, Env: []string{"CODA_MCP_PIDFILE=" + pidfile, "CODA_MCP_GATE=" + gate}}}, nil, nil)
	held, err := os.OpenFile(gate, os.O_WRONLY, 0) // the server is at its gate, and stays there
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	pid := mcptest.PID(t, pidfile)
	host.Close()
	if !mcptest.Gone(pid) {
		t.Errorf("the MCP server %d is still there after Close", pid)
	}
	late := host.Start("s-2", []mcp.Server{{Name: "late", Command: bin, Dir: dir}}, nil, nil)
	if w := late.Warnings(); len(w) != 1 || w[0] != "MCP server late was not started: coda is shutting down" {
		t.Errorf("a set started after Close warns %q", w)
	}
}

// A session without servers has a nil set, whose methods do nothing.
func TestSet_nil(t *testing.T) {
	host := mcp.NewHost(mcp.Options{})
	set := host.Start("s-1", nil, nil, nil)
	if set != nil {
		t.Fatalf("Start with nothing to start = %v, want nil", set)
	}
	if conns, warnings := set.Turn(context.Background(), true, nil, nil); conns != nil || warnings != nil {
		t.Errorf("a nil set's Turn = %v, %q", conns, warnings)
	}
	<-set.Stop()
}
