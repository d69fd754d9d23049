package engine

import (
	"fmt"
	"slices"
	"strings"

	"github.com/coda-acp/coda/engine/blueprint"
)

// An MCPTool is a tool of an MCP server (engine/mcp). A stage offers MCP
// tools by their server rather than by name (blueprint/mcp.go: "mcp",
// "mcp:SERVER", "mcp:SERVER/TOOL"), since the editor chooses the servers
// per session.
type MCPTool interface {
	MCP() (server, tool string)
}

// stageToolNames are the names of the tools a stage's available_tools
// offer, sorted, with each MCP entry replaced by the names of the session's
// MCP tools it matches (none when the session has no such server).
func stageToolNames(listed []string, tools map[string]Tool) []string {
	var names []string
	for _, entry := range listed {
		if !blueprint.IsMCPRef(entry) {
			names = append(names, entry)
			continue
		}
		for name, t := range tools {
			if m, ok := t.(MCPTool); ok {
				if server, tool := m.MCP(); blueprint.MatchesMCPRef(entry, server, tool) {
					names = append(names, name)
				}
			}
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// DefaultMaxTools is Engine.MaxTools's default: the most tools OpenAI
// takes in one request.
const DefaultMaxTools = 128

// capTools holds what a stage visit offers to Engine.MaxTools tools in
// all, counted as the model request carries them: the listed tools (names,
// sorted) and own more of coda's (submit_output, delegation, transition).
// coda's own tools are always kept; MCP tools past the cap are left out,
// in name order, and one warning names them: a server with thousands of
// tools would make every request megabytes long, and OpenAI takes at
// most 128.
func (v *stageVisit) capTools(listed []string, own int) []string {
	r := v.run
	room := r.e.maxTools() - own
	for _, name := range listed {
		if _, ok := r.share.tools[name].(MCPTool); !ok {
			room--
		}
	}
	var kept []string
	var left [][2]string // {server, tool}
	for _, name := range listed {
		if m, ok := r.share.tools[name].(MCPTool); ok {
			if room <= 0 {
				server, tool := m.MCP()
				left = append(left, [2]string{server, tool})
				continue
			}
			room--
		}
		kept = append(kept, name)
	}
	if len(left) > 0 {
		r.warn(leftOutWarning(left, r.e.maxTools()))
	}
	return kept
}

// leftOutWarning says which MCP tools ({server, tool}) were not offered,
// naming at most a few of each server's.
func leftOutWarning(left [][2]string, max int) string {
	const named = 5
	var parts []string
	for i := 0; i < len(left); {
		server := left[i][0]
		j := i
		var tools []string
		for ; j < len(left) && left[j][0] == server; j++ {
			if len(tools) < named {
				tools = append(tools, left[j][1])
			}
		}
		part := server + ": " + strings.Join(tools, ", ")
		if n := j - i; n > named {
			part += fmt.Sprintf(" and %d more", n-named)
		}
		parts = append(parts, part)
		i = j
	}
	return fmt.Sprintf("MCP: %d tools were not offered to the model, past the %d tools coda offers at once (max_tools under [mcp] in config.toml): %s",
		len(left), max, strings.Join(parts, "; "))
}
