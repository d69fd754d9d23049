package blueprint

import "github.com/coda-acp/coda/internal/answer"

// The engine's own tools, by the names a blueprint lists them under in
// available_tools (engine: submit_output.go, transition.go,
// subrun_fan_out.go, subrun_spawn.go). A stage gets submit_output from its
// mode or require_output, transition from its transitions, fan_out from
// its fan_out table, and spawn_agent and wait_for_agent from its spawn
// list.
const (
	ToolSubmitOutput = answer.SubmitTool
	ToolTransition   = "transition"
	ToolFanOut       = "fan_out"
	ToolSpawnAgent   = "spawn_agent"
	ToolWaitForAgent = "wait_for_agent"
	// Done is the transition target that ends the run (allow_complete).
	Done = "DONE"
)

// WaysOut lists the targets a stage offers: its transitions in order,
// then DONE when allow_complete. Any fallback is the first of them.
func (s *Stage) WaysOut() []string {
	targets := append([]string(nil), s.TransitionOrder...)
	if s.AllowComplete {
		targets = append(targets, Done)
	}
	return targets
}
