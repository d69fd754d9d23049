package engine

import (
	"fmt"
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine/llm"
)

// A model the catalog says lacks tools is called without them; one whose
// server refuses them is, from then on, for the whole session, said once.
func TestModelCalls_learn(t *testing.T) {
	var notes notesKept
	support := NewToolSupport()
	tc := modelCalls{
		facts: func(spec string) llm.ModelFact {
			return llm.ModelFact{NoTools: map[bool]string{true: "catalog"}[spec == "ollama:tiny"]}
		},
		support: support,
		notes:   &notes,
	}
	if tc.with("ollama:tiny") || !tc.with("ollama:big") {
		t.Fatal("the catalog's word not taken")
	}
	refused := fmt.Errorf("ollama:big: %w: does not support tools", llm.ErrToolsUnsupported)
	tc.learn("ollama:big", refused)
	tc.learn("ollama:big", refused)
	if tc.with("ollama:big") || support.lacking("ollama:big") == "" {
		t.Error("a server's refusal not learned")
	}
	if len(notes.warnings) != 1 || !strings.HasPrefix(notes.warnings[0], "ollama:big cannot call tools (its server says: ") {
		t.Errorf("warnings = %q", notes.warnings)
	}
	// A later visit of the session, with the same ToolSupport, knows it.
	if later := (modelCalls{support: support, notes: &notes}); later.with("ollama:big") {
		t.Error("the session forgot")
	}
	made := 0
	bare := func() string { made++; return "bare" }
	for range 2 {
		if got := tc.system(bare); got != "bare" {
			t.Fatalf("system = %q", got)
		}
	}
	if made != 1 {
		t.Errorf("the bare system prompt made %d times", made)
	}
}
