package lint

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine/blueprint"
	"github.com/google/go-cmp/cmp"
)

// lintTools stands in for the builtin tools' names (engine/tools is
// above lint): the names are what matters to Blueprint.
var lintTools = []string{"read_file", "list_files", "grep", "write_file", "edit_file", "shell"}

// lintFacts stands in for cmd/coda's model catalog: a few models it knows
// cannot call tools.
func lintFacts(spec string) string {
	switch spec {
	case "ollama:gemma3:4b", "ollama:llama2", "openai:o1-mini":
		return "no tools capability"
	}
	return ""
}

// lintEfforts stands in for the catalog's effort levels.
func lintEfforts(spec string) []string {
	switch spec {
	case "openai:gpt-4o":
		return []string{"off"}
	case "openai:o3":
		return []string{"low", "medium", "high"}
	}
	return []string{"off", "low", "medium", "high", "xhigh"}
}

// servedBy stands in for the config's providers: a spec names one of
// the built-in ones.
func servedBy(spec string) string {
	provider, _, ok := strings.Cut(spec, ":")
	switch {
	case !ok:
		return fmt.Sprintf("model %q: want PROVIDER:MODEL", spec)
	case !slices.Contains([]string{"anthropic", "openai", "ollama", "gemini", "openrouter", "script"}, provider):
		return fmt.Sprintf("model %s: unknown provider %q", spec, provider)
	}
	return ""
}

var lintOpts = Options{Tools: lintTools, NoTools: lintFacts, Efforts: lintEfforts, Served: servedBy}

// summary renders findings as "severity[code] key", the part tests pin.
func summary(fs []blueprint.Finding) []string {
	out := []string{}
	for _, f := range fs {
		out = append(out, strings.TrimSpace(f.Severity+"["+f.Code+"] "+f.Key))
	}
	return out
}

// TestSource_Blueprints runs the purpose-broken blueprints of
// testdata/blueprints, which `coda validate` is tested on too.
func TestSource_Blueprints(t *testing.T) {
	want := map[string][]string{
		"good.toml":                 {}, // its schema goes strict as its projection
		"unreachable.toml":          {"warning[unreachable-stage] stages.notes"},
		"cannot-answer.toml":        {"error[output-stage-cannot-answer] stages.answer.model"},
		"allow-complete-skips.toml": {"warning[allow-complete-skips-output] stages.explore.allow_complete"},
		"missing-stage.toml": {
			"error[missing-stage] stages.review.transitions.reprot",
			"warning[end-skips-output] stages.review",
			"warning[unreachable-stage] stages.report",
		},
		"unknown-key.toml": {
			"error[unknown-key] agent.nmae",
			"error[unknown-key] stages.answer.max_iteration",
		},
		"missing-schema.toml":   {"error[output-spec] stages.answer.output"},
		"schema-unchecked.toml": {"error[schema-unchecked] stages.answer.output"},
		"bad-toml.toml":         {"error[toml]"},
		"unknown-tool.toml": {
			"error[unknown-tool] stages.answer.available_tools",
			"warning[tool-not-offered] stages.notes.available_tools",
		},
		"design-fan-out.toml": {},
		"end-skips.toml":      {"warning[end-skips-output] stages.quick"},
		"bad-mode.toml":       {"error[bad-value] stages.answer.mode"},
		"unknown-model.toml": {
			"error[unknown-model] stages.review.model",
			"warning[unknown-model] stages.answer.model",
		},
	}
	files, err := filepath.Glob("../../testdata/blueprints/*.toml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no blueprints in ../../testdata/blueprints: %v", err)
	}
	for _, file := range files {
		name := filepath.Base(file)
		t.Run(name, func(t *testing.T) {
			w, ok := want[name]
			if !ok {
				t.Fatalf("%s has no expectation in this table: add one", name)
			}
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			dir, _ := filepath.Abs(filepath.Dir(file))
			b, fs := Source(data, file, dir, lintOpts)
			if diff := cmp.Diff(w, summary(fs)); diff != "" {
				t.Errorf("findings (-want +got):\n%s\nfull: %v", diff, fs)
			}
			_, loadErr := blueprint.Parse(data, file)
			if loadErr != nil && !hasError(fs) {
				t.Errorf("Parse refuses it (%v) but no finding is an error", loadErr)
			}
			if b == nil && loadErr == nil {
				t.Errorf("Source returned no blueprint for one that loads")
			}
		})
	}
}

func hasError(fs []blueprint.Finding) bool {
	for _, f := range fs {
		if f.Severity == blueprint.SeverityError {
			return true
		}
	}
	return false
}

func TestSource_Cases(t *testing.T) {
	tests := []struct {
		name, toml string
		want       []string
	}{
		{
			name: "DONE only after the owed answer",
			toml: `
[stages.answer]
mode = "output"
[stages.answer.transitions.polish]
hint = "h"
[stages.polish]
allow_complete = true
available_tools = ["read_file"]
[stages.polish.transitions.answer]
hint = "h"`,
			want: []string{},
		},
		{
			name: "DONE reachable on one path that skips the answer",
			toml: `
[stages.triage]
[stages.triage.transitions.answer]
hint = "h"
[stages.triage.transitions.tidy]
hint = "h"
[stages.answer]
mode = "output"
[stages.answer.transitions.tidy]
hint = "h"
[stages.tidy]
allow_complete = true
[stages.tidy.transitions.answer]
hint = "h"`,
			want: []string{"warning[allow-complete-skips-output] stages.tidy.allow_complete"},
		},
		{
			name: "allow_complete on the stage that owes the answer is nudged, not skipped",
			toml: `
[stages.answer]
mode = "output"
allow_complete = true
[stages.answer.transitions.more]
hint = "h"
[stages.more]
[stages.more.transitions.answer]
hint = "h"`,
			want: []string{},
		},
		{
			name: "no answer owed: DONE is fine, but no stage answers",
			toml: `
[stages.edit]
available_tools = ["write_file"]
allow_complete = true
[stages.edit.transitions.check]
hint = "h"
[stages.check]
available_tools = ["shell"]`,
			want: []string{"warning[no-output-stage]"},
		},
		{
			name: "start names a missing stage",
			toml: `
[agent]
start = "review"
[stages.answer]
mode = "output"`,
			want: []string{"error[missing-stage] agent.start"},
		},
		{
			name: "a model without tools on a stage with transitions",
			toml: `
[stages.look]
model = { models = ["ollama:llama2"] }
[stages.look.transitions.answer]
hint = "h"
[stages.answer]
mode = "output"
model = { models = ["anthropic:claude-sonnet-4-5", "openai:o1-mini"] }`,
			// The answering stage takes the model's reply as its answer.
			want: []string{"warning[stage-cannot-call-tools] stages.look.model"},
		},
		{
			name: "a model without tools where replies are not answers, or where it must move on",
			toml: `
[stages.answer]
mode = "output"
answer_from_reply = false
model = { models = ["openai:o1-mini"] }
[stages.answer.transitions.check]
hint = "h"
[stages.check]
mode = "output"
available_tools = ["read_file"]
model = { models = ["openai:o1-mini"] }
max_repairs = -1`,
			want: []string{
				"error[output-stage-cannot-answer] stages.answer.model",
				"warning[stage-cannot-call-tools] stages.check.model",
				"error[negative-limit] stages.check.max_repairs",
			},
		},
		{
			name: "negative limits and a transition without a hint",
			toml: `
[stages.look]
max_iterations = -1
[stages.look.transitions.answer]
[stages.answer]
mode = "output"
max_revisits = -2`,
			want: []string{
				"error[negative-limit] stages.look.max_iterations",
				"warning[transition-without-hint] stages.look.transitions.answer",
				"error[negative-limit] stages.answer.max_revisits",
			},
		},
		{
			name: "a stage format that retires the agent's schema",
			toml: `
[agent.output]
format = "json"
schema = { type = "object" }
[stages.answer]
mode = "output"
[stages.answer.output]
format = "xml"`,
			want: []string{"warning[output-warning] stages.answer.output"},
		},
		{
			name: "a loop with no way out",
			toml: `
[stages.a]
[stages.a.transitions.b]
hint = "h"
[stages.b]
mode = "output"
[stages.b.transitions.a]
hint = "h"`,
			want: []string{"error[run-cannot-end]"},
		},
		{
			name: "a loop left by DONE can end",
			toml: `
[stages.a]
[stages.a.transitions.b]
hint = "h"
[stages.b]
mode = "output"
allow_complete = true
[stages.b.transitions.a]
hint = "h"`,
			want: []string{},
		},
		{
			name: "pinned against --model with nothing to pin to",
			toml: `
[stages.answer]
mode = "output"
model = { allow_user_default = false }`,
			want: []string{"warning[pinned-without-model] stages.answer.model"},
		},
		{
			name: "an inline schema's own keys are not unknown keys",
			toml: `
[stages.answer]
mode = "output"
[stages.answer.output]
format = "json"
schema = { type = "object", properties = { anything = { type = "string" } } }`,
			want: []string{}, // and it goes strict as its projection
		},
		{
			name: "a schema that fits both strict subsets: nothing to say",
			toml: `
[stages.answer]
mode = "output"
[stages.answer.output]
format = "json"
schema = { type = "object", additionalProperties = false, required = ["a"], properties = { a = { type = "string" } } }`,
			want: []string{},
		},
		{
			name: "structured prompted asks nothing strict: nothing to say",
			toml: `
[stages.answer]
mode = "output"
[stages.answer.output]
format = "json"
structured = "prompted"
schema = { type = "object", properties = { a = { type = "string" } } }`,
			want: []string{},
		},
		{
			name: "structured that is none of its values",
			toml: `
[agent.output]
structured = "strict"
[stages.answer]
mode = "output"
[stages.answer.output]
structured = "always"`,
			want: []string{
				"error[bad-value] agent.output.structured",
				"error[bad-value] stages.answer.output.structured",
				"error[output-spec] stages.answer.output",
			},
		},
		{
			name: "several load problems at once, and the rest linted",
			toml: `
[stages.a]
max_iteratons = 3
[stages.a.transitions.b]
hint = "h"
[stages.a.transitions.c]
hint = "h"
[stages.b]
mode = "output"
[stages.b.ouput]
format = "json"`,
			want: []string{
				"error[unknown-key] stages.a.max_iteratons",
				"error[unknown-key] stages.b.ouput",
				"error[missing-stage] stages.a.transitions.c",
			},
		},
		{
			name: "a stage's effort that some of its models do not take",
			toml: `
[stages.answer]
mode = "output"
model = { models = ["openai:gpt-5.5", "openai:o3", "openai:gpt-4o"], effort = "xhigh" }`,
			want: []string{"warning[effort-not-taken] stages.answer.model.effort", "warning[effort-not-taken] stages.answer.model.effort"},
		},
		{
			name: "a stage's effort every model takes",
			toml: `
[stages.answer]
mode = "output"
model = { models = ["openai:gpt-5.5", "openai:o3"], effort = "high" }`,
			want: []string{},
		},
		{
			name: "an effort that is no level",
			toml: `
[stages.answer]
mode = "output"
model = { effort = "hihg" }`,
			want: []string{"error[bad-value] stages.answer.model.effort"},
		},
		{
			name: "the taint gate on to guard",
			toml: `
[agent.taint]
policy = "ask"
private = ["**/.env", "config/**"]
[stages.answer]
mode = "output"`,
			want: []string{},
		},
		{
			name: "the taint gate on only to record",
			toml: `
[agent.taint]
policy = "allow"
[stages.answer]
mode = "output"`,
			want: []string{"warning[taint-allow-only-records] agent.taint.policy"},
		},
		{
			name: "a taint policy that is none, a private glob that is none, a key misspelt",
			toml: `
[agent.taint]
policy = "block"
private = ["[a-"]
privte = []
[stages.answer]
mode = "output"`,
			want: []string{
				"error[unknown-key] agent.taint.privte",
				"error[bad-value] agent.taint.policy",
				"error[bad-value] agent.taint.private",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, fs := Source([]byte(tt.toml), "case.toml", t.TempDir(), lintOpts)
			if diff := cmp.Diff(tt.want, summary(fs)); diff != "" {
				t.Errorf("findings (-want +got):\n%s\nfull: %v", diff, fs)
			}
		})
	}
}

func TestSource_Suggestions(t *testing.T) {
	_, fs := Source([]byte("[agent.taint]\npolicy = \"ask\"\nprivat = []\n[stages.a]\nmode = \"output\"\nmax_iteratons = 3\n[stages.a.model]\nmodles = []\n"), "s.toml", "", Options{})
	var msgs []string
	for _, f := range fs {
		msgs = append(msgs, f.Key+": "+f.Message)
	}
	sort.Strings(msgs)
	want := []string{
		"agent.taint.privat: unknown key (did you mean agent.taint.private?)",
		"stages.a.max_iteratons: unknown key (did you mean stages.a.max_iterations?)",
		"stages.a.model.modles: unknown key (did you mean stages.a.model.models?)",
	}
	if diff := cmp.Diff(want, msgs); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// validate takes MCP entries in their three forms, and refuses one that
// names no server.
func TestSource_mcpEntries(t *testing.T) {
	ok := `
[stages.answer]
mode = "output"
available_tools = ["read_file", "mcp", "mcp:github", "mcp:github/create_issue"]`
	if _, fs := Source([]byte(ok), "ok.toml", t.TempDir(), lintOpts); len(fs) != 0 {
		t.Errorf("findings for valid MCP entries: %v", fs)
	}
	bad := `
[stages.answer]
mode = "output"
available_tools = ["mcp:", "mcp:github/", "mcpx"]`
	_, fs := Source([]byte(bad), "bad.toml", t.TempDir(), lintOpts)
	want := []string{
		"error[unknown-tool] stages.answer.available_tools",
		"error[unknown-tool] stages.answer.available_tools",
		"error[unknown-tool] stages.answer.available_tools",
	}
	if diff := cmp.Diff(want, summary(fs)); diff != "" {
		t.Errorf("findings (-want +got):\n%s\nfull: %v", diff, fs)
	}
}

// FuzzSource: any text gets findings without a panic, and a blueprint
// Parse refuses always gets an error finding (validate exits 1).
func FuzzSource(f *testing.F) {
	files, _ := filepath.Glob("../../testdata/blueprints/*.toml")
	for _, file := range files {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("[stages.a]\n[stages.a.transitions.a]\n"))
	leviath, _ := filepath.Glob("../../testdata/leviath/*/*.toml")
	for _, file := range leviath {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("[stages.a.model]\nmodels = [\"x\", { provider = \"p\", model = \"m\" }, 3]\nparameters = { stop = [1], seed = -1 }\nrequest_timeout_secs = -5\n"))
	dir := f.TempDir() // where relative schema and validator paths point: empty
	f.Fuzz(func(t *testing.T, data []byte) {
		b, fs := Source(data, "fuzz.toml", dir, lintOpts)
		if _, err := blueprint.Parse(data, "fuzz.toml"); err != nil {
			if !hasError(fs) {
				t.Fatalf("Parse refuses it (%v), but no finding is an error: %v", err, fs)
			}
		} else if b == nil {
			t.Fatalf("a blueprint that loads came back nil")
		}
	})
}

// coda validate says in one info line why an answer's schema is not sent
// strict, as written nor projected, and to which providers (DESIGN §17).
func TestSource_notStrict(t *testing.T) {
	for _, tt := range []struct{ schema, want string }{
		{`{ type = "object", required = ["a", "b"], properties = { a = { type = "string" } } }`,
			"not strict: the top level requires \"b\", which its properties do not describe (coda checks every answer all the same)"},
		{`{ type = "object", properties = { n = { "$ref" = "#/$defs/node" } }, "$defs" = { node = { type = "object", properties = { next = { "$ref" = "#/$defs/node" } } } } }`,
			"not strict for Anthropic: `$defs.node` is recursive, which Anthropic's strict subset does not take (coda checks every answer all the same)"},
	} {
		_, fs := Source([]byte("[stages.answer]\nmode = \"output\"\n[stages.answer.output]\nformat = \"json\"\nschema = "+tt.schema+"\n"), "case.toml", t.TempDir(), lintOpts)
		if len(fs) != 1 || fs[0].Severity != blueprint.SeverityInfo || fs[0].Message != tt.want {
			t.Errorf("findings %v; want the one info line %q", fs, tt.want)
		}
	}
}
