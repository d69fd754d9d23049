package engine

import (
	"slices"

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
