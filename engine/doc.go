// Package engine runs a prompt turn: it loads blueprints, walks their stages
// with the model loop (streamed text, tool calls, transitions, the owed
// answer), checks submissions through outputspec, and writes run records.
//
// The engine knows nothing of ACP or terminals: it emits Events to a Sink,
// reaches files and the user through a Workspace, and calls Models chosen
// by its caller.
package engine
