package outputspec

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

func TestDesk_Submit(t *testing.T) {
	root := t.TempDir()
	c := mustCompile(t, Spec{Format: "json", Validator: testdata("validators/has_title.star"),
		Artifacts: []ArtifactDecl{{Name: "report", Required: true}}})
	d := NewDesk(c)
	sub := func(args string) Verdict {
		return d.Submit(context.Background(), Submission{Args: json.RawMessage(args), Root: root})
	}
	first := sub(`{"content": "{\"body\": 1}"}`)
	expect(t, first, false, "refused by its validator")
	again := sub(`{"content": "{\"body\": 1}", "artifacts": ["report.md"]}`)
	expect(t, again, false, "This answer is identical to a refused submission. It was refused because:\n", first.Feedback)

	// A refusal for artifacts is not remembered: the file may appear.
	args := `{"content": "{\"title\": \"t\"}", "artifacts": ["report.md"]}`
	expect(t, sub(args), false, `artifact "report.md" does not exist`)
	if err := os.WriteFile(filepath.Join(root, "report.md"), []byte("# R\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	v := sub(args)
	expect(t, v, true)
	if len(v.Artifacts) != 1 || v.Artifacts[0].Name != "report" {
		t.Errorf("artifacts = %+v", v.Artifacts)
	}

	// Another desk (another visit) has no memory.
	expect(t, NewDesk(c).Submit(context.Background(), Submission{Args: json.RawMessage(`{"content": "{\"body\": 1}"}`)}), false, "refused by its validator")
}
