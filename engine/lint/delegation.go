package lint

import (
	"strings"

	"github.com/coda-acp/coda/engine/blueprint"
)

// What loading and `coda validate` check of a blueprint's fan_out tables,
// worker stages and spawn lists (DESIGN §12).

// Finding codes of delegation, stable like lint.go's.
const (
	CodeFanOutWorker       = "fan-out-worker"        // the worker stage is missing, or lacks allow_as_worker
	CodeWorkerCannotSubmit = "worker-cannot-submit"  // the worker stage has no submit_output
	CodeWorkerOwesNothing  = "worker-owes-nothing"   // a worker may end without an answer: an empty section
	CodeSpawnUnresolved    = "spawn-unresolved"      // a spawn entry names no agent coda can load
	CodeDelegationListed   = "delegation-tool-alone" // fan_out or spawn_agent listed without what offers it
)

// lintDelegation checks what fan_out and spawn_agent will start: the
// worker stage exists, is meant to be one, and answers; each spawn entry
// loads (when opts can load agents).
func lintDelegation(fs *findings, b *blueprint.Blueprint, opts Options) {
	for _, name := range b.Order {
		s := b.Stages[name]
		key := "stages." + name
		if f := s.FanOut; f != nil && f.Worker != "" {
			w := b.Stages[f.Worker]
			switch {
			case w == nil:
				fs.add(blueprint.SeverityError, CodeFanOutWorker, key+".fan_out.worker", "no stage is named %q; the stages are %s", f.Worker, strings.Join(b.Order, ", "))
			case !w.AllowAsWorker:
				fs.add(blueprint.SeverityError, CodeFanOutWorker, key+".fan_out.worker", "the stage %s does not say allow_as_worker = true: fan_out runs only stages meant to be workers", f.Worker)
			case !w.CanSubmit():
				fs.add(blueprint.SeverityError, CodeWorkerCannotSubmit, "stages."+f.Worker, "a worker hands in its answer with submit_output, which this stage does not have: give it require_output = true")
			case !w.OwesOutput():
				fs.add(blueprint.SeverityWarning, CodeWorkerOwesNothing, "stages."+f.Worker, "require_output = false: a worker that submits nothing is reported with its last message, which may be empty, so the merge may get empty sections; require_output = true reports such a worker as FAILED")
			}
		}
		if opts.Agents == nil {
			continue
		}
		seen := map[string]bool{}
		for _, agent := range s.Spawn {
			if strings.TrimSpace(agent) == "" || seen[agent] {
				continue // a bad value, reported by checkDelegation
			}
			seen[agent] = true
			if _, err := opts.Agents(agent, b.Dir); err != nil {
				fs.add(blueprint.SeverityError, CodeSpawnUnresolved, key+".spawn", "%q does not load: %v", agent, err)
			}
		}
	}
}

// delegationTool reports whether name is one of the engine's tools for
// starting sub-runs.
func delegationTool(name string) bool {
	return name == blueprint.ToolFanOut || name == blueprint.ToolSpawnAgent || name == blueprint.ToolWaitForAgent
}

// lintListed checks a delegation tool a stage lists in available_tools:
// listing it is allowed, but what offers it is the stage's fan_out table
// or spawn list.
func lintListed(fs *findings, s *blueprint.Stage, tool string) {
	if s.Delegates(tool) {
		return
	}
	key := "stages." + s.Name + ".available_tools"
	if tool == blueprint.ToolFanOut {
		fs.add(blueprint.SeverityError, CodeDelegationListed, key, "fan_out is offered by a [stages.%s.fan_out] table naming the worker stage; this stage has none", s.Name)
		return
	}
	fs.add(blueprint.SeverityError, CodeDelegationListed, key, "%s is offered by a spawn = [...] list of the agents the stage may start; this stage has none", tool)
}

// workedFrom reports whether the stage is the fan_out worker of a reached
// stage, or of a worker of one: fan_out, not a transition, reaches it.
func workedFrom(b *blueprint.Blueprint, stage string, reached map[string]bool) bool {
	seen := map[string]bool{}
	var from func(string) bool
	from = func(name string) bool {
		if seen[name] {
			return false
		}
		seen[name] = true
		for _, p := range b.Order {
			if f := b.Stages[p].FanOut; f != nil && f.Worker == name && (reached[p] || from(p)) {
				return true
			}
		}
		return false
	}
	return from(stage)
}
