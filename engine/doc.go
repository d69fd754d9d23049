// Package engine runs a prompt turn: it loads blueprints, walks their stages
// with the model loop (streamed text, tool calls, transitions, the owed
// answer), checks submissions through outputspec, and writes run records
// through store.
//
// The engine knows nothing of ACP or terminals: it emits Events to a Sink,
// reaches files and the user through a Workspace, and calls Models chosen
// by its caller. What it shares with them: blueprint.go (Blueprint),
// model.go (Model, its requests and responses, ModelFacts), tool.go (Tool,
// Call, ToolResult), event.go (the Events a Sink receives), workspace.go
// (Workspace: files, permission, commands; the local disk's, every access
// through internal/rootfs), answer.go (the run statuses; the answer
// record itself is store.Answer), history.go (what a session's next turn
// keeps of the earlier ones).
//
// Where each rule lives: engine.go (the Engine, a Turn, a run, its
// result), stage.go (a stage
// visit's model loop), submit_output.go and transition.go (the engine's own
// tools), repair.go (the owed answer: refusals, nudges, revisits, the repair
// budget), reply.go (a reply checked as the answer), unavailable.go (the
// model's "cannot"), notools.go (models without tool calling), noanswer.go
// (the closing message of a run without an answer), runfs.go (run:PATH, the
// run's own record as later stages read it), keep.go (artifact copies in
// the record), args.go (the cap on tool arguments and how they are shown),
// record.go (what a run writes into its record; store writes it),
// lint.go (`coda validate`), image.go (a prompt's
// images, and what stands in for them), mcp_tools.go (how stages name MCP
// servers' tools; engine/mcp runs them). Runs started by a run (DESIGN §12):
// child.go (a sub-run: what it shares with its parent, its sink, workspace
// and record), fan_out.go (the fan_out tool, its workers and report),
// spawn.go (spawn_agent and wait_for_agent), fan_out_lint.go (what loading
// and `coda validate` check of them). The taint gate (DESIGN §13) is
// engine/taint's; taint.go is where the engine asks it (the answer, egress
// tools, the user's permission, the audit in the record). Helpers shared with other packages are
// under internal/: textcut (the one cut of text to a byte count), glob
// (the one matcher of relative paths), rootfs (files under the roots),
// proc (a command's process group), fileuri, bytesize.
package engine
