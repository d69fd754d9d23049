// Package acp serves the Agent Client Protocol over a byte stream (stdio):
// its protocol types and handlers, on internal/jsonrpc (newline-delimited
// JSON-RPC 2.0, coda's own: the read loop, the line reader, the output,
// the calls to the editor, the typed method table, a session's messages
// held in order), and the mapping of engine events to session/update
// notifications, encoded by hand on the hot path. acp/editor is the editor
// as a session's workspace; acp/history a session's history as its file
// keeps it and session/load shows it again (and the mapping of its file:
// picks by name, the read, the replay, list cursors); acp/mcpservers the
// mcpServers of a session's request as engine/mcp's servers (-32602 naming
// a wrong field); acp/contracts the answer's contracts, the launch's
// compiled once and a session's levels over them.
//
// Where each part lives:
//
//	methods.go     the method table: each method's name, params type, result type and handler
//	               (jsonrpc.Table decodes, refuses -32602 and answers, once); aside
//	protocol.go    the wire types: each method's params and result, named as the ACP schema does
//	server.go      Options, the Server, Serve, and ACP's error codes (jsonrpc.NewError)
//	models.go      Models: what acp asks of the model catalog (cmd/coda's internal/catalog), one field
//	initialize.go  initialize
//	auth.go        the "env" auth method, authenticate, a turn that cannot reach a model (-32000)
//	session.go     sessions: new, set_config_option, close, cancel, and their bounded history
//	order.go       which session a message names, held in wire order (jsonrpc.Order) behind its
//	               request that reads files off the read loop (sessionAside)
//	store.go       a session as the store keeps it (store/session.go): its state, option values
//	               (history.Picks), its prompt's blocks for acp/history; session ids
//	load.go        the loader: the sessions that outlive coda, owned with the store and the
//	               sessions being restored; saving a session; other processes' turns taken in;
//	               session/load, resume, delete (its handlers, bound in the table by ofLoader);
//	               the replay (acp/history); titles
//	list.go        session/list (the loader's): the store's index, newest first, cwd, cursor pages,
//	               damage noted
//	modes.go       a session's picks set (set_config_option, set_mode, /commands), kept and sent;
//	               acp/pickers says what each option shows, stores and refuses, and what a mode does
//	listed.go      the providers' models for the model option (pickers.Listing): sent after answers
//	commands.go    slash commands: /format, /mode, /model
//	prompt.go      a prompt turn: started on the read loop (or, queued, by startDequeued), run and
//	               answered in its own goroutine
//	images.go      a prompt's image blocks, decoded and checked
//	mcp.go         mcpServers read (acp/mcpservers) and handed to engine/mcp, which runs them;
//	               each turn given the session's MCP tools (the session's methods)
//	updates.go     engine events as session/update notifications; the hand-written encoders of them
//	commentary.go  the work as thoughts, the answer the only message; --commentary, _meta.coda.commentary
//	notices.go     warnings as notice updates, where the client takes them (session.notices); the
//	               client's capabilities as initialize sent them (editor.Capabilities)
//	taint.go       the prompt's embedded resources, as sources for the taint gate
//	queue.go       prompts owed an answer off the read loop (promptQueue): by request id, queued behind
//	               a session's turn, or steering it; cancelled with it
//	fork.go        session/fork (the unstable schema's, the loader's): a new session from another's file
//	usage.go       what a turn used and cost: PromptResponse.usage, usage_update's cost (the
//	               session's so far, unknown while a model called has no price)
//
// Only this package writes to the protocol stream (through jsonrpc.Conn).
package acp
