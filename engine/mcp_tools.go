package engine

import (
	"slices"
	"strings"
)

// An MCPTool is a tool of an MCP server (engine/mcp). A stage offers MCP
// tools by their server rather than by name, since the editor chooses the
// servers per session: "mcp" (every server's tools), "mcp:SERVER" (one
// server's) or "mcp:SERVER/TOOL" (one tool), with the names the editor and
// the server gave.
type MCPTool interface {
	MCP() (server, tool string)
}

// MCPPrefix begins the available_tools entries that name MCP servers.
const MCPPrefix = "mcp"

// IsMCPRef reports whether an available_tools entry names MCP tools.
func IsMCPRef(entry string) bool {
	return entry == MCPPrefix || strings.HasPrefix(entry, MCPPrefix+":")
}

// CheckMCPRef says what is wrong with an available_tools entry that names
// MCP tools; "" when nothing is.
func CheckMCPRef(entry string) string {
	rest, ok := strings.CutPrefix(entry, MCPPrefix+":")
	if !ok {
		return ""
	}
	server, tool, hasTool := strings.Cut(rest, "/")
	if server == "" || (hasTool && tool == "") {
		return "write mcp (every MCP server's tools), mcp:SERVER or mcp:SERVER/TOOL"
	}
	return ""
}

// matchesMCPRef reports whether the MCP tool is one that entry names.
func matchesMCPRef(entry, server, tool string) bool {
	rest, ok := strings.CutPrefix(entry, MCPPrefix+":")
	return entry == MCPPrefix || (ok && (rest == server || rest == server+"/"+tool))
}

// OffersMCP reports whether a stage of b offers MCP tools: a turn then
// waits for the session's servers still starting.
func OffersMCP(b *Blueprint) bool {
	for _, s := range b.Stages {
		if slices.ContainsFunc(s.AvailableTools, IsMCPRef) {
			return true
		}
	}
	return false
}

// stageToolNames are the names of the tools a stage's available_tools
// offer, sorted, with each MCP entry replaced by the names of the session's
// MCP tools it matches (none when the session has no such server).
func stageToolNames(listed []string, tools map[string]Tool) []string {
	var names []string
	for _, entry := range listed {
		if !IsMCPRef(entry) {
			names = append(names, entry)
			continue
		}
		for name, t := range tools {
			if m, ok := t.(MCPTool); ok {
				if server, tool := m.MCP(); matchesMCPRef(entry, server, tool) {
					names = append(names, name)
				}
			}
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}
