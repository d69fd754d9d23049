// Package engine runs a prompt turn: it walks a blueprint's stages with
// the model loop (streamed text, tool calls, transitions, the owed
// answer), checks submissions through outputspec, and has store write the
// run's record.
//
// An Engine holds what lasts as long as the process (models, tools, the
// record store, ids, limits, log, the taint launch, model facts) and is
// built once per entry point in cmd/coda; (*Engine).Run takes a Turn, what
// one prompt is. The engine knows nothing of ACP or terminals: it emits
// Events to a Sink, reaches files and the user through a Workspace, and
// calls Models chosen by its caller.
//
// What it shares with its callers and tools: engine.go (Engine, Turn,
// Result, Sink), tool.go (Tool, Call, ToolResult, Ask), event.go (the
// Events a Sink receives), workspace.go (Workspace: files, permission,
// commands; engine/local is the local disk's, acp the editor's), answer.go
// (the run statuses), history.go (what a session's next turn keeps of the
// earlier ones), transcript.go (each turn's conversation as it was sent,
// which the next is sent again), image.go (what later turns read in place of a prompt's
// images), args.go (a reply's tool calls held to their caps, and how they
// are shown), notools.go (ToolSupport: models without tool calling),
// ask.go (Asker: asking the user, the ask_user tool). What
// a model call is (Model, Request, Response, images, effort levels, the
// argument cap) is engine/llm's, which the providers import instead of
// the engine.
//
// Where each rule of a run lives: engine.go (a run, its end, its result),
// stage.go (a stage visit: its model loop, and the owners it composes),
// submit_output.go and transition.go (the engine's own tools), reply.go (a
// reply checked as the answer), unavailable.go (the model's "cannot"),
// noanswer.go (the closing message of a run without an answer), record.go
// (what a run writes into its record), runfs.go (run:PATH, the run's own
// record as later stages read it), keep.go (artifact copies in the record),
// mcp_tools.go (which of the session's MCP tools a stage offers),
// instructions.go (the project's AGENTS.md, given to every stage),
// outcome.go (how a visit ended), preamble.go (what later stages see of
// earlier ones), frame.go (untrusted data, framed), capture.go (artifacts
// captured by glob), touched.go (the files a call touched), shape_record.go
// (how each call asked for the answer's shape, and the schema it sent),
// resume.go (a run resumed from its last finished stage), trace.go (the
// spans of a run, a stage visit, a model call and a tool call:
// Engine.Tracer).
//
// A stage visit's rules are owners, each a type that keeps its own state
// and is given what it needs of the visit as arguments, so each is tested
// without a run: repair (repair.go: the owed answer's refusals, nudges,
// revisits, the repair budget), answerShape (shape.go: the answer's shape
// at the source, typed, strict and forced submit_output, native replies,
// what arrives told apart; submit_output's spec), fitter (compact.go:
// requests that fit the window), modelCalls (notools.go, effort.go,
// params.go: what each model is sent, tools or none, the reasoning effort,
// the parameters its server has not refused), visitGate (taint.go: where a
// visit asks the taint gate) and waysOut (transition.go: the ways out).
// stageVisit holds the conversation and composes them in its loop; no type
// of the module has more than 40 methods (layout_test.go).
//
// Runs started by a run (DESIGN §12): subrun.go (a sub-run: what it
// shares with its parent, its sink, workspace and record; the delegation
// tools' dispatch), subrun_fan_out.go (the fan_out tool, its workers and
// report), subrun_spawn.go (spawn_agent and wait_for_agent).
//
// The self-contained parts are packages of their own that import nothing
// of the engine, which is their user: engine/blueprint (the blueprint's
// types and strict loader), engine/lint (`coda validate`'s checks),
// engine/llm (what a model call is), engine/taint (the taint gate, DESIGN
// §13), store (run records, DESIGN §9); engine/local, the local
// Workspace, is its user in turn. Helpers shared with other packages are
// under internal/: answer (the answer's vocabulary that engine/llm, store
// and engine/blueprint share without importing outputspec), textcut (the
// one cut of text to a byte count), glob (the one matcher of relative
// paths), rootfs (files under the roots), proc (a command's process
// group), namedfile (a file a caller names, read within a size),
// addrspace (Starlark under an address-space limit), plainjson, fileuri,
// bytesize.
package engine
