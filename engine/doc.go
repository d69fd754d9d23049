// Package engine runs a prompt turn: it loads blueprints, walks their stages
// with the model loop (streamed text, tool calls, transitions, the owed
// answer), checks submissions through outputspec, and writes run records.
//
// The engine knows nothing of ACP or terminals: it emits Events to a Sink,
// reaches files and the user through a Workspace, and calls Models chosen
// by its caller.
//
// Where each rule lives: engine.go (a run, its result), stage.go (a stage
// visit's model loop), submit_output.go and transition.go (the engine's own
// tools), repair.go (the owed answer: refusals, nudges, revisits), args.go
// (the cap on tool arguments and how they are shown), record.go (run
// records), lint.go (`coda validate`), image.go (a prompt's images, and
// what stands in for them), mcp_tools.go (how stages name MCP servers'
// tools; engine/mcp runs them), egress.go (tools that may carry data off
// the machine).
package engine
