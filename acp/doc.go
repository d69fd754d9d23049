// Package acp serves the Agent Client Protocol over a byte stream (stdio):
// newline-delimited JSON-RPC 2.0 on github.com/sourcegraph/jsonrpc2 with
// coda's own line reader, the method table (initialize, sessions, prompt
// turns, cancel), and the mapping of engine events to session/update
// notifications, encoded by hand on the hot path.
//
// Only this package writes to the protocol stream.
package acp
