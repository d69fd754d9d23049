// Package acp serves the Agent Client Protocol over a byte stream (stdio):
// newline-delimited JSON-RPC 2.0, its connection coda's own (the read loop,
// the line reader, the output, the calls to the editor), the typed method
// table (initialize, sessions, prompt turns, cancel), and the mapping of
// engine events to session/update notifications, encoded by hand on the
// hot path.
//
// Where each part lives:
//
//	conn.go        the JSON-RPC connection: its whole life (serve, disconnect, drain, cancel, wait,
//	               flush, close), the read loop, and the calls coda makes to the editor
//	stream.go      the line reader: one message a line, bad and over-long lines answered, never fatal
//	output.go      the protocol stream out: one line a message, under one lock, flushed when idle
//	methods.go     the method table: each method's name, params type, result type and handler;
//	               params decoded and refused (-32602) and requests answered, once, there
//	protocol.go    the wire types: each method's params and result, named as the ACP schema does
//	server.go      Options, the Server, replies and the JSON-RPC error codes
//	initialize.go  initialize
//	auth.go        the "env" auth method, authenticate, a turn that cannot reach a model (-32000)
//	session.go     sessions: new, set_config_option, close, cancel, and their bounded history
//	order.go       a session's messages held in wire order behind its request that reads files off
//	               the read loop (sessionAside)
//	store.go       a session as the store keeps it (store/session.go): its state, option values by
//	               name, exchanges, prompts as replayed; session ids
//	load.go        saving a session; other processes' turns taken in; session/load, resume, delete;
//	               the replay; titles
//	streamed.go    what a turn streamed as text, kept bounded with its exchange for the replay
//	list.go        session/list: the store's index, newest first, cwd, cursor pages, damage noted
//	modes.go       the pickers: output_format, model and mode options, set_mode, what a mode does
//	effort.go      the effort option (thought_level): the levels the session's model takes
//	listed.go      the providers' models for the model option: asked once, in the background
//	commands.go    slash commands: /format, /mode, /model
//	prompt.go      a prompt turn: started on the read loop, run and answered in its own goroutine
//	images.go      a prompt's image blocks, decoded and checked
//	mcp.go         mcpServers read (-32602 naming a wrong field) and handed to engine/mcp, which
//	               runs them; each turn given the session's MCP tools
//	client.go      the editor as a workspace: fs/*, terminal/*, session/request_permission
//	updates.go     engine events as session/update notifications
//	commentary.go  the work as thoughts, the answer the only message; --commentary, _meta.coda.commentary
//	notices.go     warnings as notice updates, where the client takes them (session.notices)
//	encode.go      the hand-written JSON encoders, model-supplied JSON made compact
//	taint.go       the prompt's embedded resources, as sources for the taint gate
//	queue.go       prompts sent during a turn: queued behind it, or steering it; cancelled with it
//	fork.go        session/fork (the unstable schema's): a new session from another's file
//	ask.go         elicitation/create: the model's ask_user, the taint gate's question with a reason
//	usage.go       what a turn used and cost: PromptResponse.usage, usage_update's cost (the
//	               session's so far, unknown while a model called has no price)
//
// Only this package writes to the protocol stream.
package acp
