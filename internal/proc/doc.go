// Package proc starts a command line in the platform's shell and in a
// process group of its own, and kills the group: how the local workspace
// runs shell commands and engine/mcp runs stdio MCP servers, so that what
// they start in the background ends with them.
package proc
