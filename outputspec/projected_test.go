package outputspec

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine/provider/anthropic/anthropictest"
	"github.com/coda-acp/coda/engine/provider/openai/openaitest"
	"github.com/coda-acp/coda/outputspec/projection"
	"github.com/coda-acp/coda/outputspec/projection/projectiontest"
	"github.com/coda-acp/coda/validators"
)

// benchSchemas are testdata/jsonschemabench's schemas (398 real ones, see
// its SOURCE.md), by file.
func benchSchemas(t testing.TB) map[string][]byte {
	t.Helper()
	files, err := filepath.Glob("../testdata/jsonschemabench/*/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no schemas: %v", err)
	}
	out := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Join(filepath.Base(filepath.Dir(f)), filepath.Base(f))] = b
	}
	return out
}

// fakeProblem is what each family's fake API says of a strict tool's
// schema: why it refuses it, or "".
var fakeProblem = map[string]func(json.RawMessage) string{
	StrictOpenAI: func(raw json.RawMessage) string {
		var v any
		json.Unmarshal(raw, &v)
		return openaitest.StrictProblem(v)
	},
	StrictAnthropic: anthropictest.SchemaProblem,
}

// The share (issue 31): of the real schemas that compile, at least 75 %
// are sent strict to OpenAI (a Responses function tool) and to Anthropic
// (a strict tool), each one within the provider's documented subset and
// limits, as its fake API checks them; and for each, an answer that fits
// the projection and leaves out every optional property it can is read
// back to a value the schema as written accepts, or is refused only for
// a keyword the projection left out (which coda's check holds, and the
// repair loop repairs: TestProjection_droppedRepaired).
func TestProjection_share(t *testing.T) {
	schemas := benchSchemas(t)
	names := make([]string, 0, len(schemas))
	for name := range schemas {
		names = append(names, name)
	}
	slices.Sort(names)
	compiled := 0
	strict := map[string]int{}
	accepted := map[string]int{}
	before, beforeReply, reply := map[string]int{}, map[string]int{}, map[string]int{} // as written; a reply format
	why := map[string]map[string]int{}
	for _, name := range names {
		doc := schemas[name]
		checker, err := compileSchema(doc)
		if err != nil {
			continue
		}
		compiled++
		var schema map[string]any
		if json.Unmarshal(doc, &schema) != nil {
			continue
		}
		c, err := Compile(Spec{Format: "json", Schema: schema})
		if err != nil || c.schema == nil {
			continue
		}
		for _, fam := range []string{StrictOpenAI, StrictAnthropic} {
			if c.fit(fam, false) == "" {
				before[fam]++
			}
			if c.fit(fam, true) == "" {
				beforeReply[fam]++
			}
			if c.ReplyStrict(fam) == "" {
				reply[fam]++
				if msg := fakeProblem[fam](c.ReplySchemaFor(fam)); msg != "" {
					t.Errorf("%s, %s: a reply format sent strict, and the fake refuses it: %s", name, fam, msg)
				}
			}
			shape := ToolShape{Typed: true, Strict: fam}
			if w := c.ToolStrict(fam, shape); w != "" {
				if why[fam] == nil {
					why[fam] = map[string]int{}
				}
				why[fam][reason(w)]++
				continue
			}
			strict[fam]++
			tool := c.ToolSchemaShaped(Ways{Tool: true, Unavailable: true}, shape)
			if msg := fakeProblem[fam](tool); msg != "" {
				t.Errorf("%s, %s: sent strict, and the fake refuses it: %s", name, fam, msg)
				continue
			}
			var ts any
			json.Unmarshal(tool, &ts)
			cs := ts.(map[string]any)["properties"].(map[string]any)["content"].(map[string]any)
			if fam == StrictOpenAI {
				cs = cs["anyOf"].([]any)[0].(map[string]any) // the answer, or null beside unavailable
			}
			content := projectiontest.MinimalAt(cs, ts.(map[string]any))
			arg, _ := json.Marshal(map[string]any{"content": content})
			v := c.Check(context.Background(), Submission{Args: arg, Typed: true, Projected: fam})
			if v.Accepted {
				accepted[fam]++
				continue
			}
			// Refused: only for what the projection left out (and said).
			var data any
			json.Unmarshal([]byte(c.back(string(mustJSON(content)), fam, false)), &data)
			p := c.projected(fam, false)
			for _, viol := range checker.Validate(data) {
				if !droppedCovers(p, viol) {
					t.Errorf("%s, %s: the minimal answer %s, read back, is refused for what the projection kept: %s %s", name, fam, mustJSON(content), viol.Pointer, viol.Message)
				}
			}
		}
	}
	for _, fam := range []string{StrictOpenAI, StrictAnthropic} {
		share := float64(strict[fam]) / float64(compiled)
		t.Logf("%s: %d of %d compiling schemas sent strict as a tool (%.1f %%; as written %d), as a reply format %d (as written %d); %d minimal answers accepted as read back",
			fam, strict[fam], compiled, 100*share, before[fam], reply[fam], beforeReply[fam], accepted[fam])
		for w, n := range why[fam] {
			t.Logf("  %3d %s", n, w)
		}
		if share < 0.75 {
			t.Errorf("%s: %.1f %% sent strict; want at least 75 %%", fam, 100*share)
		}
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// reason is a why-not without its place, to count.
func reason(w string) string {
	if i := strings.Index(w, "` "); i >= 0 {
		w = w[i+2:]
	}
	if i := strings.IndexAny(w, "(\"0123456789"); i > 0 {
		w = w[:i]
	}
	return w
}

// droppedCovers reports whether a violation may come of what the
// projection left out (and said), or of a pattern or format the minimal
// answer did not try to meet: a projection that left nothing out
// guarantees the rest.
func droppedCovers(p *projection.Projection, v validators.Violation) bool {
	m := strings.ToLower(v.Message)
	return p != nil && len(p.Dropped) > 0 || strings.Contains(m, "pattern") || strings.Contains(m, "format")
}

// Anthropic counts a request's strict schemas together: a strict reply
// format goes beside a strict submit_output only where both fit.
func TestContract_ReplyBesideTool(t *testing.T) {
	props := func(n int) map[string]any {
		p := map[string]any{}
		for i := range n {
			p[string(rune('a'+i))] = map[string]any{"type": "string"}
		}
		return map[string]any{"type": "object", "properties": p}
	}
	for _, tt := range []struct {
		optional int
		want     bool
	}{{3, true}, {9, true}, {10, false}, {12, false}} {
		c := mustCompile(t, Spec{Format: "json", Schema: props(tt.optional)})
		if got := c.ReplyBesideTool(StrictAnthropic); got != tt.want {
			t.Errorf("%d optional: %v; want %v", tt.optional, got, tt.want)
		}
		if !c.ReplyBesideTool(StrictOpenAI) {
			t.Errorf("%d optional: OpenAI counts no shared limit", tt.optional)
		}
	}
}
