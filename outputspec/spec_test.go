package outputspec

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func ptr[T any](v T) *T { return &v }

var objSchema = map[string]any{"type": "object"}

// The six levels of DESIGN.md §3 an editor's session has, as the engine
// and acp fill them in; option is the output_format option's format.
func levels(agent, stage, launch, session, option, prompt Spec) Levels {
	bp, cwd := filepath.FromSlash("/bp"), filepath.FromSlash("/cwd")
	return Levels{
		Agent: &Level{Dir: bp, Spec: agent}, Stage: &Level{Dir: bp, Spec: stage}, StageName: "summary",
		Launch: &Level{Dir: cwd, Spec: launch}, SessionMeta: &Level{Dir: cwd, Spec: session},
		ConfigOption: option.Format, PromptMeta: &Level{Dir: cwd, Spec: prompt},
	}
}

func TestResolve(t *testing.T) {
	decls := []ArtifactDecl{{Name: "report", Type: "text/markdown", Required: true}}
	otherDecls := []ArtifactDecl{{Name: "clip", Type: "video/*"}}
	tests := []struct {
		name     string
		levels   Levels
		want     Spec
		warnings []string
	}{
		{
			name:   "nothing set: markdown",
			levels: levels(Spec{}, Spec{}, Spec{}, Spec{}, Spec{}, Spec{}),
			want:   Spec{Format: "markdown"},
		},
		{
			name: "later wins per field",
			levels: levels(
				Spec{Format: "json", Instructions: "agent", Example: "{}", SchemaFile: "schemas/a.json"},
				Spec{Instructions: "stage"},
				Spec{Example: `{"a":1}`},
				Spec{OnValidatorError: "accept"},
				Spec{},
				Spec{Instructions: "prompt"},
			),
			want: Spec{Format: "json", Instructions: "prompt", Example: `{"a":1}`, SchemaFile: "/bp/schemas/a.json", OnValidatorError: "accept"},
		},
		{
			name: "paths resolve against their level's dir; absolute ones stay",
			levels: levels(
				Spec{Format: "json", Validator: "v/a.star"},
				Spec{},
				Spec{SchemaFile: "s.json"},
				Spec{Validator: "/abs/b.star"},
				Spec{}, Spec{},
			),
			want: Spec{Format: "json", SchemaFile: "/cwd/s.json", Validator: "/abs/b.star"},
		},
		{
			name: "an inline schema replaces a schema file and the reverse",
			levels: levels(
				Spec{Format: "json", SchemaFile: "a.json"},
				Spec{Schema: objSchema},
				Spec{}, Spec{}, Spec{}, Spec{},
			),
			want: Spec{Format: "json", Schema: objSchema},
		},
		{
			name: "artifacts cascade whole: the nearest non-empty list wins",
			levels: levels(
				Spec{Format: "json", Artifacts: decls},
				Spec{Artifacts: otherDecls},
				Spec{}, Spec{Artifacts: nil}, Spec{}, Spec{},
			),
			want: Spec{Format: "json", Artifacts: otherDecls},
		},
		{
			name: "overwrite_artifacts: false wins over an earlier true",
			levels: levels(
				Spec{OverwriteArtifacts: ptr(true)}, Spec{}, Spec{OverwriteArtifacts: ptr(false)}, Spec{}, Spec{}, Spec{},
			),
			want: Spec{Format: "markdown", OverwriteArtifacts: ptr(false)},
		},
		{
			name: "the launch (--output-* flags) asks for xml where the blueprint declared json with checks: all retired",
			levels: levels(
				Spec{Format: "json", Schema: objSchema, Artifacts: decls, Instructions: "kept"},
				Spec{Validator: "v/findings.star", OnValidatorError: "accept"},
				Spec{Format: "xml"},
				Spec{}, Spec{}, Spec{},
			),
			want: Spec{Format: "xml", Instructions: "kept"},
			warnings: []string{
				"the launch (--output-* flags) asks for xml where json was in effect: retired schema (from the blueprint's [agent.output]); validator findings.star (from [stages.summary.output]); declared artifacts report (from the blueprint's [agent.output])",
			},
		},
		{
			name: "restating the format with an alias and another case retires nothing",
			levels: levels(
				Spec{Format: "json", Schema: objSchema, Validator: "v.star", Example: "{}"},
				Spec{Format: " JSON "},
				Spec{Format: "application/json"},
				Spec{}, Spec{}, Spec{},
			),
			want: Spec{Format: "application/json", Schema: objSchema, Validator: "/bp/v.star", Example: "{}"},
		},
		{
			name: "another format retires the earlier example: a JSON example is no model for XML",
			levels: levels(
				Spec{Format: "json", Example: `{"a": 1}`, Instructions: "kept"},
				Spec{}, Spec{}, Spec{},
				Spec{Format: "xml"},
				Spec{},
			),
			want:     Spec{Format: "xml", Instructions: "kept"},
			warnings: []string{"the session's output_format option asks for xml where json was in effect: retired example (from the blueprint's [agent.output])"},
		},
		{
			name: "a level naming a new format with its own example keeps it",
			levels: levels(
				Spec{Format: "json", Example: "{}", Schema: objSchema},
				Spec{},
				Spec{Format: "yaml", Example: "a: 1"},
				Spec{}, Spec{}, Spec{},
			),
			want:     Spec{Format: "yaml", Example: "a: 1"},
			warnings: []string{"the launch (--output-* flags) asks for yaml where json was in effect: retired example (from the blueprint's [agent.output]); schema (from the blueprint's [agent.output])"},
		},
		{
			name: "md and markdown are one format",
			levels: levels(
				Spec{Format: "markdown", Artifacts: decls}, Spec{}, Spec{}, Spec{}, Spec{Format: "md"}, Spec{},
			),
			want: Spec{Format: "md", Artifacts: decls},
		},
		{
			name: "a level bringing its own checks with a new format keeps them",
			levels: levels(
				Spec{Format: "json", SchemaFile: "a.json"},
				Spec{},
				Spec{Format: "yaml", SchemaFile: "b.json", Validator: "c.star"},
				Spec{}, Spec{}, Spec{},
			),
			want:     Spec{Format: "yaml", SchemaFile: "/cwd/b.json", Validator: "/cwd/c.star"},
			warnings: []string{"the launch (--output-* flags) asks for yaml where json was in effect: retired schema a.json (from the blueprint's [agent.output])"},
		},
		{
			name: "a session's checks are retired by the config option's format",
			levels: levels(
				Spec{}, Spec{},
				Spec{Format: "csv", Validator: "header.star"},
				Spec{Schema: objSchema},
				Spec{Format: "json"},
				Spec{},
			),
			want:     Spec{Format: "json"},
			warnings: []string{"the session's output_format option asks for json where csv was in effect: retired schema (from session/new _meta.coda.output); validator header.star (from the launch (--output-* flags))"},
		},
		{
			name: "retirement by the prompt, after a stage override",
			levels: levels(
				Spec{Format: "markdown"},
				Spec{Format: "json", Schema: objSchema},
				Spec{}, Spec{}, Spec{},
				Spec{Format: "toml"},
			),
			want:     Spec{Format: "toml"},
			warnings: []string{"session/prompt _meta.coda.output asks for toml where json was in effect: retired schema (from [stages.summary.output])"},
		},
		{
			name: "a format change with nothing to retire warns nothing",
			levels: levels(
				Spec{Format: "json", Instructions: "x"}, Spec{Format: "xml"}, Spec{}, Spec{}, Spec{}, Spec{},
			),
			want: Spec{Format: "xml", Instructions: "x"},
		},
		{
			name: "checks set before any format are adopted by the first format named",
			levels: levels(
				Spec{Schema: objSchema}, Spec{}, Spec{Format: "json"}, Spec{}, Spec{}, Spec{},
			),
			want: Spec{Format: "json", Schema: objSchema},
		},
		{
			name: "two retirements, each warned",
			levels: levels(
				Spec{Format: "json", Schema: objSchema},
				Spec{},
				Spec{Format: "xml", Validator: "x.star"},
				Spec{},
				Spec{Format: "csv"},
				Spec{},
			),
			want: Spec{Format: "csv"},
			warnings: []string{
				"the launch (--output-* flags) asks for xml where json was in effect: retired schema (from the blueprint's [agent.output])",
				"the session's output_format option asks for csv where xml was in effect: retired validator x.star (from the launch (--output-* flags))",
			},
		},
		{
			name: "assert_format: the later level wins",
			levels: levels(
				Spec{Format: "json", SchemaFile: "/s.json", AssertFormat: ptr(false)},
				Spec{}, Spec{}, Spec{AssertFormat: ptr(true)}, Spec{}, Spec{},
			),
			want: Spec{Format: "json", SchemaFile: "/s.json", AssertFormat: ptr(true)},
		},
		{
			name: "assert_format: kept when no level says otherwise",
			levels: levels(
				Spec{Format: "json", SchemaFile: "/s.json"}, Spec{AssertFormat: ptr(false)},
				Spec{}, Spec{Format: "JSON"}, Spec{}, Spec{},
			),
			want: Spec{Format: "JSON", SchemaFile: "/s.json", AssertFormat: ptr(false)},
		},
		{
			name: "assert_format goes with the schema a format change retires",
			levels: levels(
				Spec{Format: "json", SchemaFile: "/s.json", AssertFormat: ptr(false)},
				Spec{}, Spec{Format: "yaml", Schema: map[string]any{"type": "object"}}, Spec{}, Spec{}, Spec{},
			),
			want:     Spec{Format: "yaml", Schema: map[string]any{"type": "object"}},
			warnings: []string{"the launch (--output-* flags) asks for yaml where json was in effect: retired schema s.json (from the blueprint's [agent.output])"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, warnings := Resolve(tt.levels)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.warnings, warnings); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}

// TestResolve_order checks Levels against DESIGN.md §3's table: each
// level names a new format and brings a validator, so each retires the one
// before it, and the warnings spell out the order and the names.
func TestResolve_order(t *testing.T) {
	l := func(format, validator string) *Level {
		return &Level{Dir: "/d", Spec: Spec{Format: format, Validator: validator}}
	}
	got, warnings := Resolve(Levels{
		PromptMeta:   l("text", "/f.star"),
		ConfigOption: "markdown",
		SessionMeta:  l("toml", "/e.star"),
		Launch:       l("yaml", "/d.star"),
		Spawn:        l("csv", "/c.star"),
		Stage:        l("xml", "/b.star"), StageName: "s",
		Agent: l("json", "/a.star"),
	})
	want := []string{
		"[stages.s.output] asks for xml where json was in effect: retired validator a.star (from the blueprint's [agent.output])",
		"spawn_agent's output_* arguments asks for csv where xml was in effect: retired validator b.star (from [stages.s.output])",
		"the launch (--output-* flags) asks for yaml where csv was in effect: retired validator c.star (from spawn_agent's output_* arguments)",
		"session/new _meta.coda.output asks for toml where yaml was in effect: retired validator d.star (from the launch (--output-* flags))",
		"the session's output_format option asks for markdown where toml was in effect: retired validator e.star (from session/new _meta.coda.output)",
	}
	if diff := cmp.Diff(want, warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	if got.Format != "text" || got.Validator != "/f.star" {
		t.Errorf("the prompt's level is last: got %q with %q", got.Format, got.Validator)
	}
}

func TestSpec_Validate(t *testing.T) {
	tests := []struct {
		spec Spec
		want string // substring of the error; "" for none
	}{
		{Spec{Format: "json", Schema: objSchema}, ""},
		{Spec{Schema: objSchema, SchemaFile: "a.json"}, "schema and schema_file are both given"},
		{Spec{Schema: "{}"}, "schema must be an object (a JSON Schema), not a string"},
		{Spec{Schema: []any{}}, "not an array"},
		{Spec{OnValidatorError: "ignore"}, `on_validator_error is "ignore"`},
		{Spec{OnValidatorError: "accept"}, ""},
		{Spec{Artifacts: []ArtifactDecl{{Name: "a"}, {Name: "a"}}}, `artifact "a" is declared twice`},
		{Spec{Artifacts: []ArtifactDecl{{Type: "text/plain"}}}, "artifacts[0] has no name"},
		{Spec{Artifacts: []ArtifactDecl{{Name: "a", Type: "video"}}}, `has type "video", which is not a MIME type`},
		{Spec{Artifacts: []ArtifactDecl{{Name: "a", Type: "*/png"}}}, "not a MIME type"},
		{Spec{Artifacts: []ArtifactDecl{{Name: "a", Type: "video/*"}, {Name: "b", Type: "*/*"}}}, ""},
	}
	for _, tt := range tests {
		err := tt.spec.Validate()
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%+v: unexpected error %v", tt.spec, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%+v: error %v, want it to contain %q", tt.spec, err, tt.want)
		}
	}
}
