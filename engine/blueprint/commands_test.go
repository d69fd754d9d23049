package blueprint

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A command's prompt takes what follows the command where $ARGUMENTS
// stands, else after it; with nothing following, the prompt alone.
func TestSlashCommand_Expand(t *testing.T) {
	plain := &SlashCommand{Prompt: "Review the change."}
	placed := &SlashCommand{Prompt: "Summarise $ARGUMENTS for a newcomer."}
	tests := []struct {
		c         *SlashCommand
		arg, want string
	}{
		{plain, "", "Review the change."},
		{plain, "  src/a.go ", "Review the change.\n\nsrc/a.go"},
		{placed, "the README", "Summarise the README for a newcomer."},
		{placed, "", "Summarise  for a newcomer."},
	}
	for _, tt := range tests {
		if got := tt.c.Expand(tt.arg); got != tt.want {
			t.Errorf("Expand(%q) of %q = %q, want %q", tt.arg, tt.c.Prompt, got, tt.want)
		}
	}
}

// [agent.commands.NAME] loads named and sorted; a name an editor cannot
// take, one of coda's own, and a command without a description or a
// prompt are errors naming their key.
func TestCheckCommands(t *testing.T) {
	ok := `
[agent.commands.review]
description = "Review"
prompt = "Review the change."
[agent.commands.explain]
description = "Explain"
hint = "what"
prompt = "Explain $ARGUMENTS."
[stages.answer]
mode = "output"`
	b, fs := Load([]byte(ok), "ok.toml")
	if len(fs) != 0 || b == nil {
		t.Fatalf("findings for valid commands: %v", fs)
	}
	var names []string
	for _, c := range b.AgentCommands() {
		names = append(names, c.Name)
	}
	if diff := cmp.Diff([]string{"explain", "review"}, names); diff != "" {
		t.Errorf("AgentCommands (-want +got):\n%s", diff)
	}
	bad := `
[agent.commands.Review]
description = "x"
prompt = "x"
[agent.commands.mode]
description = "x"
prompt = "x"
[agent.commands.empty]
[agent.commands.nodesc]
prompt = "x"
[agent.commands.review]
description = "x"
promt = "x"
[stages.answer]
mode = "output"`
	_, fs = Load([]byte(bad), "bad.toml")
	want := map[string]bool{
		"error[unknown-key] agent.commands.review.promt":     true,
		"error[bad-value] agent.commands.Review":             true,
		"error[bad-value] agent.commands.mode":               true,
		"error[bad-value] agent.commands.empty.description":  true,
		"error[bad-value] agent.commands.empty.prompt":       true,
		"error[bad-value] agent.commands.nodesc.description": true,
		"error[bad-value] agent.commands.review.prompt":      true,
	}
	got := map[string]bool{}
	for _, s := range summary(fs) {
		got[s] = true
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("findings (-want +got):\n%s\nfull: %v", diff, fs)
	}
}
