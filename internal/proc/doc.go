// Package proc starts a command line in the platform's shell and in a
// process group of its own, and kills the group: how the local workspace
// runs shell commands and engine/mcp runs stdio MCP servers, so that what
// they start in the background ends with them; and, on Linux, a command
// bound to coda's life (StartBound: MCP servers), so that it dies with coda
// however coda dies.
package proc
