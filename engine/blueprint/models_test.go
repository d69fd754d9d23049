package blueprint

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A stage's models are read in every form Leviath writes them: strings
// (PROVIDER:MODEL, bare, vendor/model), inline tables and
// [[stages.X.model.models]], mixed; parameters and the timeout with them.
func TestLoad_modelForms(t *testing.T) {
	b, err := Parse([]byte(`
[stages.a]
model = { models = ["claude-sonnet-5", { provider = "ollama", model = "qwen3.5:9b" }, "xai/grok-imagine-video", "openai:gpt-5.5", { model = "gpt-5.5" }] }

[stages.b]
[[stages.b.model.models]]
provider = "meshy"
model    = "multi-image-to-3d"
[stages.b.model]
allow_user_default = false
request_timeout_secs = 900
[stages.b.model.parameters]
temperature = 0.2
ai_model = "meshy-7"
thinking = { type = "adaptive" }
`), "bp.toml")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"claude-sonnet-5", "ollama:qwen3.5:9b", "xai/grok-imagine-video", "openai:gpt-5.5", "gpt-5.5"}
	if diff := cmp.Diff(want, b.Stages["a"].Model.Models); diff != "" {
		t.Errorf("stage a's models (-want +got):\n%s", diff)
	}
	m := b.Stages["b"].Model
	if diff := cmp.Diff([]string{"meshy:multi-image-to-3d"}, m.Models); diff != "" {
		t.Errorf("stage b's models (-want +got):\n%s", diff)
	}
	if m.RequestTimeoutSecs != 900 || b.Stages["b"].UserDefaultAllowed() {
		t.Errorf("timeout %d, user default allowed %v; want 900 and false", m.RequestTimeoutSecs, b.Stages["b"].UserDefaultAllowed())
	}
	wantParams := map[string]any{"temperature": 0.2, "ai_model": "meshy-7", "thinking": map[string]any{"type": "adaptive"}}
	if diff := cmp.Diff(wantParams, m.Parameters); diff != "" {
		t.Errorf("parameters (-want +got):\n%s", diff)
	}
}

// A model entry that is not one is named with its place in the list and
// says what an entry takes.
func TestLoad_badModelEntries(t *testing.T) {
	_, fs := Load([]byte(`
[stages.a]
request_timeout_secs = 3
[stages.a.model]
models = ["", { provider = "x", model = "y", effort = "high" }, { provider = "x" }, 7]
request_timeout_secs = -1
parameters = { temperature = "hot", max_output_tokens = 0, stop = [1] }
`), "bp.toml")
	var got []string
	for _, f := range fs {
		got = append(got, f.Key+": "+f.Message)
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{
		"stages.a.request_timeout_secs: unknown key",
		"stages.a.model.models[0]: an empty model name",
		"stages.a.model.models[1]: unknown key effort: a model entry takes provider and model",
		"stages.a.model.models[2]: a model entry needs model",
		"stages.a.model.models[3]: 7 is neither a model name nor a { provider, model } table",
		"stages.a.model.request_timeout_secs: -1: give a positive number of seconds",
		"stages.a.model.parameters.temperature: hot: want a number",
		"stages.a.model.parameters.max_output_tokens: 0: want a positive whole number",
		"stages.a.model.parameters.stop: want a string or a list of strings",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("findings lack %q:\n%s", want, all)
		}
	}
}

// Leviath's keys that coda does not take are refused with why, once per
// table, and a Rhai validator says coda's are Starlark.
func TestLoad_leviathKeys(t *testing.T) {
	_, fs := Load([]byte(`
[agent]
entry_stage = "a"
[context.regions]
brief = { kind = "pinned", seed = "task_input" }
[stages.a]
tool_permissions = { shell = "deny" }
worker_stage = "b"
[stages.a.output_routing]
"image/*" = "pictures"
[stages.a.transitions.b]
hint = "go"
condition = "always"
[stages.b]
mode = "output"
[stages.b.output]
validator = "validators/check.rhai"
`), "bp.toml")
	var got []string
	for _, f := range fs {
		got = append(got, f.Key+": "+f.Message)
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{
		"agent.entry_stage: Leviath's entry_stage is coda's [agent] start",
		"context.regions: Leviath's context regions: coda has none",
		"stages.a.tool_permissions: Leviath's per-tool policy",
		"stages.a.worker_stage: coda's fan-out is a [stages.NAME.fan_out] table",
		"stages.a.output_routing: Leviath's media routing: coda has no media providers",
		"stages.a.transitions.b.condition: a Leviath transition key coda does not take",
		"stages.b.output.validator: validators/check.rhai is a Rhai validator: coda's validators are Starlark scripts",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("findings lack %q:\n%s", want, all)
		}
	}
	if strings.Contains(all, "context.regions.brief") || strings.Contains(all, "output_routing.") {
		t.Errorf("a key inside a refused table is named on its own:\n%s", all)
	}
}
