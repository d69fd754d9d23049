// Package lint is `coda validate`'s checks of a blueprint beyond loading:
// its answer contracts compile, the models of stages that must call tools
// can, every stage is reachable, no path ends the run without the answer
// it owes, fan_out workers and spawn lists make sense, and a taint gate is
// not turned on only to record. Each problem is a blueprint.Finding with a
// stable code. Source lints a blueprint's text (loading's findings first);
// Blueprint lints a loaded one.
//
// It imports blueprint and nothing else of coda's above it: what it checks
// against (the tools coda has, what is known of models, the agents it can
// load) comes in Options, from cmd/coda.
//
// Where each rule lives: lint.go (the codes, Options, the contracts, the
// stage graph, models without tools, available_tools, [agent.taint]),
// delegation.go (fan_out workers and spawn lists).
package lint
