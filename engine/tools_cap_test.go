package engine_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/tools"
)

// mcpTool stands in for an MCP server's tool (engine/mcp).
type mcpTool struct{ server, tool string }

func (t mcpTool) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: t.server + "__" + t.tool, Description: "An MCP tool."}
}
func (mcpTool) Kind() string                                        { return "other" }
func (mcpTool) Run(context.Context, *engine.Call) engine.ToolResult { return engine.ToolResult{} }
func (t mcpTool) MCP() (string, string)                             { return t.server, t.tool }

// mcpTools are n tools of the MCP server named server, as a session
// offers them (Turn.Tools).
func mcpTools(server string, n int) map[string]engine.Tool {
	m := map[string]engine.Tool{}
	for i := range n {
		t := mcpTool{server, fmt.Sprintf("t%05d", i)}
		m[t.Spec().Name] = t
	}
	return m
}

const cappedAgent = `
[agent]
name = "capped"
[stages.look]
system_prompt = "Look."
available_tools = ["read_file", "list_files", "grep", "write_file", "edit_file", "shell", "mcp", "fan_out"]
[stages.look.transitions.answer]
hint = "Seen enough"
[stages.look.fan_out]
worker = "work"
[stages.work]
allow_as_worker = true
[stages.answer]
mode = "output"
available_tools = ["read_file", "mcp"]
`

// A model request offers at most Engine.MaxTools tools in all (128 by
// default), counted as the request carries them: coda's built-in tools,
// submit_output, transition and fan_out are always offered, and the
// session's MCP tools fill what room is left, in name order. One warning
// names the MCP tools each stage left out.
func TestRun_toolsCapped(t *testing.T) {
	for _, tt := range []struct{ max, mcp int }{{0, 300}, {20, 300}, {0, 50}, {3, 300}} {
		turn := newTurn(t, cappedAgent, `
[[turn]]
[[turn.tool_calls]]
name = "transition"
arguments = { to = "answer" }

[[turn]]
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "Done." }
`)
		sp := &spy{Model: turn.Models.(oneModel).m}
		turn.Models = oneModel{sp}
		turn.Engine.Tools = tools.Builtin()
		turn.Engine.MaxTools = tt.max
		turn.Turn.Tools = mcpTools("many", tt.mcp)
		res := runTurn(context.Background(), turn, &events{})
		if res.Status != engine.StatusAnswered || len(sp.reqs) != 2 {
			t.Fatalf("max %d, %d MCP tools: Run = %s (%v) after %d calls", tt.max, tt.mcp, res.Status, res.Err, len(sp.reqs))
		}
		limit := tt.max
		if limit == 0 {
			limit = engine.DefaultMaxTools
		}
		for i, req := range sp.reqs {
			var names []string
			mcp := 0
			for _, ts := range req.Tools {
				names = append(names, ts.Name)
				if strings.HasPrefix(ts.Name, "many__") {
					mcp++
				}
			}
			own := []string{"read_file", "submit_output"}
			if i == 0 {
				own = []string{"read_file", "list_files", "grep", "write_file", "edit_file", "shell", "fan_out", "transition"}
			}
			for _, name := range own {
				if !slices.Contains(names, name) {
					t.Errorf("max %d, request %d: %s is not offered: %q", tt.max, i, name, names)
				}
			}
			// coda's own are never left out; MCP tools fill the room left.
			wantMCP := min(tt.mcp, max(0, limit-len(own)))
			if len(req.Tools) != len(own)+wantMCP || mcp != wantMCP {
				t.Errorf("max %d, %d MCP tools: request %d offers %d tools, %d of them MCP; want %d, %d", tt.max, tt.mcp, i, len(req.Tools), mcp, len(own)+wantMCP, wantMCP)
			}
			if tt.max == 0 && tt.mcp == 300 && len(req.Tools) != 128 {
				t.Errorf("request %d offers %d tools, want 128", i, len(req.Tools))
			}
		}
		var left []string
		for _, w := range res.Warnings {
			if strings.HasPrefix(w, "MCP: ") {
				left = append(left, w)
			}
		}
		switch {
		case tt.mcp < limit && len(left) > 0:
			t.Errorf("%d MCP tools, under the cap: warnings %q", tt.mcp, left)
		case tt.max == 0 && tt.mcp == 300:
			// Two stages, each leaving out its own: one warning each.
			if len(left) != 2 || !strings.Contains(left[0], "180 tools were not offered to the model, past the 128 tools") ||
				!strings.Contains(left[0], "many: t00120, t00121, t00122, t00123, t00124 and 175 more") ||
				!strings.Contains(left[1], "174 tools were not offered") {
				t.Errorf("warnings = %q", left)
			}
		}
	}
}
