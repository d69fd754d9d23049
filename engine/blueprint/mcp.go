package blueprint

import (
	"slices"
	"strings"
)

// How a stage names MCP servers' tools in available_tools: by their
// server rather than by name, since the editor chooses the servers per
// session: "mcp" (every server's tools), "mcp:SERVER" (one server's) or
// "mcp:SERVER/TOOL" (one tool), with the names the editor and the server
// gave. The engine matches them against the session's MCP tools
// (engine/mcp_tools.go); engine/mcp runs the servers.

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

// MatchesMCPRef reports whether the MCP tool is one that entry names.
func MatchesMCPRef(entry, server, tool string) bool {
	rest, ok := strings.CutPrefix(entry, MCPPrefix+":")
	return entry == MCPPrefix || (ok && (rest == server || rest == server+"/"+tool))
}

// OffersMCP reports whether a stage of b offers MCP tools: a turn then
// waits for the session's servers still starting.
func (b *Blueprint) OffersMCP() bool {
	for _, s := range b.Stages {
		if slices.ContainsFunc(s.AvailableTools, IsMCPRef) {
			return true
		}
	}
	return false
}
