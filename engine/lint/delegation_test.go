package lint

import (
	"errors"
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine/blueprint"
	"github.com/google/go-cmp/cmp"
)

// What loading and `coda validate` say of fan_out tables, worker stages
// and spawn lists.
func TestSource_Delegation(t *testing.T) {
	const merge = `
[stages.plan.transitions.merge]
hint = "h"
[stages.merge]
mode = "output"
`
	tests := []struct {
		name, toml string
		want       []string
	}{
		{
			name: "a worker stage reached by fan_out alone is fine",
			toml: `
[stages.plan]
available_tools = ["fan_out"]
[stages.plan.fan_out]
worker = "w"
[stages.w]
allow_as_worker = true
require_output = true` + merge,
			want: []string{},
		},
		{
			name: "the worker stage is missing",
			toml: `
[stages.plan]
[stages.plan.fan_out]
worker = "nope"` + merge,
			want: []string{"error[fan-out-worker] stages.plan.fan_out.worker"},
		},
		{
			name: "the worker stage lacks allow_as_worker",
			toml: `
[stages.plan]
[stages.plan.fan_out]
worker = "w"
[stages.w]
require_output = true` + merge,
			want: []string{"error[fan-out-worker] stages.plan.fan_out.worker"},
		},
		{
			name: "a worker stage that cannot submit",
			toml: `
[stages.plan]
[stages.plan.fan_out]
worker = "w"
[stages.w]
allow_as_worker = true` + merge,
			want: []string{"error[worker-cannot-submit] stages.w"},
		},
		{
			name: "a worker stage that owes nothing",
			toml: `
[stages.plan]
[stages.plan.fan_out]
worker = "w"
[stages.w]
mode = "output"
require_output = false
allow_as_worker = true` + merge,
			want: []string{"warning[worker-owes-nothing] stages.w"},
		},
		{
			name: "bad values, and a misspelt key",
			toml: `
[stages.plan]
spawn = ["a", "a", ""]
[stages.plan.fan_out]
worker = "w"
max_workers = 17
on_worker_failure = "stop"
report_bytes = 10
max_worker = 2
[stages.w]
allow_as_worker = true
require_output = true` + merge,
			want: []string{
				"error[unknown-key] stages.plan.fan_out.max_worker",
				"error[bad-value] stages.plan.fan_out.max_workers",
				"error[bad-value] stages.plan.fan_out.on_worker_failure",
				"error[bad-value] stages.plan.fan_out.report_bytes",
				"error[bad-value] stages.plan.spawn",
				"error[bad-value] stages.plan.spawn",
				"error[spawn-unresolved] stages.plan.spawn",
			},
		},
		{
			name: "spawn entries that load and one that does not",
			toml: `
[stages.plan]
mode = "output"
spawn = ["researcher", "agents/missing.toml"]
available_tools = ["spawn_agent", "wait_for_agent"]`,
			want: []string{"error[spawn-unresolved] stages.plan.spawn"},
		},
		{
			name: "the tools listed without what offers them",
			toml: `
[stages.plan]
mode = "output"
available_tools = ["fan_out", "wait_for_agent"]`,
			want: []string{"error[delegation-tool-alone] stages.plan.available_tools", "error[delegation-tool-alone] stages.plan.available_tools"},
		},
	}
	opts := lintOpts
	opts.Agents = func(name, dir string) (*blueprint.Blueprint, error) {
		if name == "researcher" {
			return &blueprint.Blueprint{}, nil
		}
		return nil, errors.New("no such file")
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, fs := Source([]byte(tt.toml), "case.toml", t.TempDir(), opts)
			if diff := cmp.Diff(tt.want, summary(fs)); diff != "" {
				t.Errorf("findings (-want +got):\n%s\nfull: %v", diff, fs)
			}
		})
	}
	_, fs := Source([]byte("[stages.plan]\n[stages.plan.fan_out]\nworkr = \"w\"\n"), "s.toml", "", Options{})
	if len(fs) == 0 || !strings.Contains(fs[0].Message, "did you mean stages.plan.fan_out.worker?") {
		t.Errorf("a misspelt fan_out key: %v", fs)
	}
}
