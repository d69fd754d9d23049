package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/coda-acp/coda/engine/llm"
	"github.com/google/go-cmp/cmp"
)

// nopTool is a tool that does nothing, known by its name.
type nopTool struct{ name string }

func (t nopTool) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: t.name, Schema: json.RawMessage(`{"type":"object"}`)}
}
func (nopTool) Kind() string                              { return "other" }
func (nopTool) Run(context.Context, *Call) (r ToolResult) { return r }

// mcpTool stands in for an MCP server's tool (engine/mcp).
type mcpTool struct{ server, tool string }

func (t mcpTool) Spec() llm.ToolSpec                  { return llm.ToolSpec{Name: t.server + "__" + t.tool} }
func (mcpTool) Kind() string                          { return "other" }
func (mcpTool) Run(context.Context, *Call) ToolResult { return ToolResult{} }
func (t mcpTool) MCP() (string, string)               { return t.server, t.tool }

// "mcp", "mcp:SERVER" and "mcp:SERVER/TOOL" name the session's MCP tools
// by server and tool as the editor and the server named them; a server the
// session does not have offers nothing.
func TestStageToolNames(t *testing.T) {
	tools := map[string]Tool{
		"read_file":         nopTool{"read_file"},
		"git__status":       mcpTool{"git", "status"},
		"git__log":          mcpTool{"git", "log"},
		"My_Server__search": mcpTool{"My Server", "search"},
	}
	tests := []struct {
		listed []string
		want   []string
	}{
		{[]string{"read_file"}, []string{"read_file"}},
		{[]string{"mcp", "read_file"}, []string{"My_Server__search", "git__log", "git__status", "read_file"}},
		{[]string{"mcp:git", "mcp:git/log"}, []string{"git__log", "git__status"}},
		{[]string{"mcp:My Server/search", "mcp:none"}, []string{"My_Server__search"}},
		{[]string{"mcp:git/status"}, []string{"git__status"}},
		{[]string{"mcp:My_Server"}, nil},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, stageToolNames(tt.listed, tools)); diff != "" {
			t.Errorf("stageToolNames(%q) (-want +got):\n%s", tt.listed, diff)
		}
	}
}

// askingTool is a read tool that asks the user before each call, as an MCP
// server's tools do.
type askingTool struct{ mcpTool }

func (askingTool) Kind() string         { return "read" }
func (askingTool) AsksPermission() bool { return true }

// A call waits for the user when its tool says it asks, whatever its kind;
// without a word from the tool, its kind decides.
func TestAsksPermission(t *testing.T) {
	for _, tt := range []struct {
		tool Tool
		want bool
	}{
		{askingTool{mcpTool{"git", "log"}}, true},
		{mcpTool{"git", "log"}, false},
		{kindTool("edit"), true},
		{kindTool("execute"), true},
		{kindTool("read"), false},
	} {
		if got := asksPermission(tt.tool); got != tt.want {
			t.Errorf("asksPermission(%T %s) = %v, want %v", tt.tool, tt.tool.Kind(), got, tt.want)
		}
	}
}

type kindTool string

func (k kindTool) Spec() llm.ToolSpec                  { return llm.ToolSpec{Name: string(k)} }
func (k kindTool) Kind() string                        { return string(k) }
func (kindTool) Run(context.Context, *Call) ToolResult { return ToolResult{} }

// A sub-run's tool calls reach the editor when they ask the user (they
// start pending), with their updates, so that a permission request names
// a call the editor knows; the others stay in the sub-run's record.
func TestSubSink_passesCallsThatAsk(t *testing.T) {
	var got []string
	to := sinkFunc(func(ev Event) {
		got = append(got, fmt.Sprint(ev.Kind == EventToolCall, " ", ev.ToolCall.Title, " ", ev.ToolCall.Status))
	})
	s := &subSink{to: to, label: "[w1] ", shown: map[string]bool{}}
	ctx := context.Background()
	for _, ev := range []Event{
		{Kind: EventToolCall, ToolCall: &ToolCallEvent{ID: "t1", Title: "git: log", Kind: "read", Status: ToolPending}},
		{Kind: EventToolCall, ToolCall: &ToolCallEvent{ID: "t2", Title: "Read a.go", Kind: "read", Status: ToolInProgress}},
		{Kind: EventToolCallUpdate, ToolCall: &ToolCallEvent{ID: "t2", Status: ToolCompleted}},
		{Kind: EventToolCallUpdate, ToolCall: &ToolCallEvent{ID: "t1", Status: ToolCompleted}},
	} {
		if err := s.Emit(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"true [w1] git: log pending", "false  completed"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("passed on (-want +got):\n%s", diff)
	}
}

type sinkFunc func(Event)

func (f sinkFunc) Emit(_ context.Context, ev Event) error { f(ev); return nil }
