package outputspec

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
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

// A reply submitted as the answer (Submission.Reply) is checked as
// submit_output with it as content would be, and a Desk takes the two for
// one answer: refused one way, it is the same answer the other way.
func TestSubmission_Reply(t *testing.T) {
	c := mustCompile(t, Spec{Format: "json", Validator: testdata("validators/has_title.star")})
	stages := []string{"review", "summary"}
	for _, content := range []string{
		`{"title": "t"}`,
		`{"body": 1}`,
		`{"title": "t",}`,
		"review",
		`{"title": "` + strings.Repeat("é", MaxAnswer/2) + `"}`, // cut at the cap
		"{\"title\": \"a\xffb\xe2\x82\"}",                       // not UTF-8: U+FFFD a byte, as JSON decodes it
	} {
		args := c.Check(context.Background(), Submission{Args: contentArgs(content), Stages: stages})
		reply := c.Check(context.Background(), Submission{Reply: content, Stages: stages})
		if !reflect.DeepEqual(args, reply) {
			t.Errorf("%.40q: as a reply %+v, as arguments %+v", content, reply, args)
		}
	}

	d := NewDesk(c)
	expect(t, d.Submit(context.Background(), Submission{Args: contentArgs(`{"body": 1}`)}), false, "refused by its validator")
	expect(t, d.Submit(context.Background(), Submission{Reply: `{"body": 1}`}), false, "identical to a refused submission")
}

// contentKey is sha256 of the answer, whatever its length against the
// buffer it is hashed through.
func TestContentKey(t *testing.T) {
	for _, n := range []int{0, 1, 4<<10 - 1, 4 << 10, 4<<10 + 1, 3*4<<10 + 17} {
		s := strings.Repeat("ab€", n/5+1)[:n]
		if contentKey(s) != sha256.Sum256([]byte(s)) {
			t.Errorf("contentKey of %d bytes differs from sha256.Sum256", n)
		}
	}
}
