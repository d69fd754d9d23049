package blueprint

import (
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// Leviath's blueprint keys that coda does not take (DESIGN §25): an
// unknown key that is one of them is refused with why, in the words of
// the migration page (docs/leviath.md), rather than as a typo.

// leviathTables are Leviath's top-level tables coda has no counterpart
// for, and why.
var leviathTables = map[string]string{
	"context":     "Leviath's context regions: coda has none; each stage is given the earlier stages' output in its prompt (docs/leviath.md)",
	"media_types": "Leviath's media registry: coda has no media providers; it types artifacts by their bytes and extension (docs/leviath.md)",
	"mime_types":  "Leviath's media registry: coda has no media providers; it types artifacts by their bytes and extension (docs/leviath.md)",
	"graph":       "Leviath's [[graph.stages]] form: write each stage as [stages.NAME] (docs/leviath.md)",
	"hooks":       "Leviath's Rhai hooks: coda runs no Rhai (docs/leviath.md)",
	"security":    "Leviath's [security]: coda asks the editor's permission for each tool that writes or runs, and gates egress with [agent.taint] (docs/leviath.md)",
	"sandbox":     "Leviath's sandbox: coda runs tools in the session's working directory, through its roots (docs/leviath.md)",
}

// leviathStageKeys are Leviath's [stages.NAME] keys coda has no
// counterpart for, and why; "" says only that coda does not take it.
var leviathStageKeys = map[string]string{
	"output_routing":       "Leviath's media routing: coda has no media providers; a stage hands files back as artifacts of submit_output (docs/leviath.md)",
	"input":                "Leviath's typed inputs: coda has no media providers; a prompt's images reach a model that sees them (docs/leviath.md)",
	"tool_accepts":         "Leviath's typed inputs: coda has no media providers (docs/leviath.md)",
	"context":              "Leviath's context regions: coda has none; each stage is given the earlier stages' output in its prompt (docs/leviath.md)",
	"hooks":                "Leviath's Rhai hooks: coda runs no Rhai (docs/leviath.md)",
	"tool_permissions":     "Leviath's per-tool policy: coda asks the editor's permission for each tool that writes or runs, and gates egress with [agent.taint] (docs/leviath.md)",
	"security":             "Leviath's per-stage security: coda gates egress with [agent.taint] (docs/leviath.md)",
	"sandbox":              "Leviath's sandbox: coda runs tools in the session's working directory, through its roots (docs/leviath.md)",
	"max_workers":          "coda's fan-out is a [stages.NAME.fan_out] table (max_workers there) (docs/leviath.md)",
	"worker_stage":         "coda's fan-out is a [stages.NAME.fan_out] table (docs/leviath.md)",
	"merge_stage":          "coda's fan-out is a [stages.NAME.fan_out] table (docs/leviath.md)",
	"accepts_messages":     "",
	"allow_blocking_tools": "",
	"available_connectors": "",
	"batch_tool_hint":      "",
	"interaction_points":   "",
	"max_attempts":         "",
	"max_items":            "",
	"nudge":                "",
	"on_worker_failure":    "coda's fan-out is a [stages.NAME.fan_out] table (on_worker_failure there) (docs/leviath.md)",
	"required_tools":       "",
	"requires_children":    "",
	"results_region":       "",
	"shell_hint":           "",
	"split_prompt":         "",
	"tool_routing":         "",
	"worker_agent":         "",
	"worker_query":         "",
}

// leviathAgentKeys are Leviath's [agent] keys coda names otherwise.
var leviathAgentKeys = map[string]string{
	"entry_stage": "Leviath's entry_stage is coda's [agent] start (docs/leviath.md)",
	"version":     "a Leviath key coda does not take: coda keeps no agent version (docs/leviath.md)",
}

// leviathKey says why coda refuses k, a key Leviath takes; "" when k is
// not one of Leviath's.
func leviathKey(k toml.Key) string {
	if why, ok := leviathTables[k[0]]; ok {
		return why
	}
	switch {
	case len(k) == 2 && k[0] == "agent":
		return leviathAgentKeys[k[1]]
	case len(k) == 3 && k[0] == "stages":
		why, ok := leviathStageKeys[k[2]]
		if ok && why == "" {
			why = "a Leviath key coda does not take (docs/leviath.md)"
		}
		return why
	case len(k) == 5 && k[0] == "stages" && k[2] == "transitions":
		if k[4] != "hint" {
			return "a Leviath transition key coda does not take: a transition has a hint, and the model chooses (docs/leviath.md)"
		}
	}
	return ""
}

// under reports whether k lies inside one of the keys already reported,
// which names the whole table.
func under(k toml.Key, reported []toml.Key) bool {
	return slices.ContainsFunc(reported, func(p toml.Key) bool {
		return len(p) < len(k) && slices.Equal(p, k[:len(p)])
	})
}

// checkValidator refuses a Leviath validator: a Rhai script.
func checkValidator(fs *findings, key, path string) {
	if strings.HasSuffix(strings.ToLower(path), ".rhai") {
		fs.add(SeverityError, CodeBadValue, key, "%s is a Rhai validator: coda's validators are Starlark scripts (validate(content) returns None or the reasons; validators/examples/*.star): port it (docs/leviath.md)", path)
	}
}
