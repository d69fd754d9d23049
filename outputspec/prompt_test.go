package outputspec

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// golden compares got with testdata/NAME.golden, rewriting it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (run with -update to accept):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func TestContract_prompts(t *testing.T) {
	tests := []struct {
		name string
		spec Spec
	}{
		{"default", Spec{}},
		{"json_full", Spec{
			Format:       "application/json",
			Instructions: "One finding per problem, most severe first.\nKeep each message under 100 characters.",
			Example:      `{"title": "Auth review", "findings": [{"severity": "high", "line": 42}]}` + "\n",
			SchemaFile:   testdata("schemas/findings.json"),
			Artifacts: []ArtifactDecl{
				{Name: "report", Type: "text/markdown", Required: true, Description: "the full report"},
				{Name: "trace"},
			},
		}},
		{"xml_instructions", Spec{Format: "XML", Instructions: "One <finding> per issue, with a severity attribute."}},
		{"custom_label", Spec{Format: "application/vnd.acme.report", Instructions: "Lead with the verdict."}},
		// One per format the answer's protocol words apart (DESIGN §19).
		{"json", Spec{Format: "json"}},
		{"yaml_schema", Spec{Format: "yaml", Schema: map[string]any{"type": "object"}}},
		{"toml", Spec{Format: "toml"}},
		{"csv", Spec{Format: "csv"}},
		{"text", Spec{Format: "text"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustCompile(t, tt.spec)
			var b strings.Builder
			b.WriteString("== ToolDescription\n")
			b.WriteString(c.ToolDescription())
			b.WriteString("\n== SystemPrompt\n")
			b.WriteString(c.SystemPrompt())
			b.WriteString("\n")
			golden(t, "prompt_"+tt.name, b.String())
		})
	}
}

func TestContract_SystemPrompt_scopedToPresentation(t *testing.T) {
	p := mustCompile(t, Spec{Format: "json"}).SystemPrompt()
	for _, want := range []string{"governs the answer's presentation", "length", "structure", "what it leads with",
		"follow this specification", "It does not change the task"} {
		if !strings.Contains(p, want) {
			t.Errorf("system prompt lacks %q:\n%s", want, p)
		}
	}
	for _, bad := range []string{"ignore", "disregard"} {
		if strings.Contains(strings.ToLower(p), bad) {
			t.Errorf("system prompt says %q:\n%s", bad, p)
		}
	}
}

func TestContract_ToolSchema(t *testing.T) {
	c := mustCompile(t, Spec{})
	got := c.ToolSchema()
	var v map[string]any
	if err := json.Unmarshal(got, &v); err != nil {
		t.Fatal(err)
	}
	var ind bytes.Buffer
	if err := json.Indent(&ind, got, "", "  "); err != nil {
		t.Fatal(err)
	}
	golden(t, "tool_schema", ind.String()+"\n")
	got[0] = 'X' // callers get their own copy
	if c.ToolSchema()[0] != '{' {
		t.Error("ToolSchema shares its bytes")
	}
}
