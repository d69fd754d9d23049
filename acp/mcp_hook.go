package acp

import "encoding/json"

// startMCP starts the MCP servers a session/new, load or resume names for
// sess. It fails only when servers is not a list of server entries
// (-32602); a server that does not start is a warning, never a failed
// session. The MCP client lands here; until then coda starts none.
func (s *Server) startMCP(sess *session, servers json.RawMessage) error { return nil }

// stopMCP stops the MCP servers of a session that is deleted, or replaced
// by a session/load of the same id.
func (s *Server) stopMCP(sess *session) {}
