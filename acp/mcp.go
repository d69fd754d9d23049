package acp

import (
	"context"
	"encoding/json"
	"maps"

	"github.com/coda-acp/coda/acp/mcpservers"
	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/blueprint"
	"github.com/coda-acp/coda/engine/mcp"
)

// A session's MCP servers (DESIGN §14) are engine/mcp's to run: started in
// the background, waited for by each turn, stopped with the session and
// with the connection. acp reads session/new's, load's and resume's
// mcpServers, hands them over, and gives each turn the session's tools.

// startMCP starts the servers of a session/new, load or resume request's
// mcpServers. A wrong-typed list is -32602 naming the field; nothing starts
// then. What cannot be started is a warning for the request's own response
// (sessionResponse takes them).
func (sess *session) startMCP(host *mcp.Host, raw json.RawMessage) error {
	servers, warnings, err := mcpservers.Parse(raw, sess.cwd)
	if err != nil {
		return err
	}
	// A server's questions go to the user when the editor takes them
	// (ask.go); else coda does not offer the server elicitation.
	var asker engine.Asker
	if a, ok := engine.AskerOf(sess.ws); ok {
		asker = a
	}
	set := host.Start(sess.id, servers, warnings, asker)
	sess.mu.Lock()
	old := sess.mcp
	sess.mcp = set
	sess.mu.Unlock()
	old.Stop()
	return nil
}

// mcpTurn gives a turn its session's MCP tools, beside the built-in ones,
// and the warnings not yet given; when the agent offers MCP tools, it
// first waits for the servers still starting (mcp.Set.Turn).
func (sess *session) mcpTurn(ctx context.Context, agent *blueprint.Blueprint, e *engine.Engine, turn *engine.Turn, sink engine.Sink) {
	sess.mu.Lock()
	set := sess.mcp
	sess.mu.Unlock()
	conns, warnings := set.Turn(ctx, agent.OffersMCP(), sink, e.NewID)
	if len(conns) > 0 {
		tools := maps.Clone(turn.Tools)
		if tools == nil {
			tools = map[string]engine.Tool{}
		}
		mcp.Tools(conns, tools)
		turn.Tools = tools
	}
	turn.Warnings = append(turn.Warnings, warnings...)
}

// stopMCP stops a session's servers in the background; the channel closes
// once they are all gone.
func (sess *session) stopMCP() <-chan struct{} {
	sess.mu.Lock()
	set := sess.mcp
	sess.mu.Unlock()
	return set.Stop()
}
