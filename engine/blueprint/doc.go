// Package blueprint is an agent's blueprint (DESIGN §2): the TOML types of
// [agent] and [stages.NAME], and their strict loader. Parse refuses a
// blueprint with every problem named in one line (what stops coda at
// start-up); Load names each problem as a Finding (what `coda validate`
// lists, with engine/lint's checks after them).
//
// It also holds what is read off a blueprint by more than one of its
// users: the stages' defaults and the answer contracts compiled per stage
// (CompileOutputs), the names of the engine's own tools as available_tools
// lists them, how a stage names MCP servers' tools, the fan_out table and
// spawn list, [agent.taint] and [agent.commands]. The engine runs a
// blueprint, engine/lint checks one, cmd/coda and acp load and offer one;
// the package imports nothing of coda's above it (outputspec for the
// answer's spec, internal/glob for [agent.taint]'s paths).
//
// Where each rule lives: blueprint.go (the types, their defaults, Parse and
// Load), finding.go (a Finding, and the codes of loading), keys.go (the
// keys each table takes: an unknown key's suggestion), outputs.go (the
// answer contracts per stage), tools.go (the engine's own tools and the
// ways out of a stage), delegation.go (fan_out tables, spawn lists, the
// agent loader), mcp.go (mcp, mcp:SERVER, mcp:SERVER/TOOL), taint.go
// ([agent.taint]), commands.go ([agent.commands] and slash commands).
package blueprint
