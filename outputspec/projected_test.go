package outputspec

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine/provider/anthropic/anthropictest"
	"github.com/coda-acp/coda/engine/provider/openai/openaitest"
	"github.com/coda-acp/coda/outputspec/projection"
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
		checker, err := validators.CompileSchema(doc)
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
			content := minimal(cs, ts.(map[string]any), 0)
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

// minimal is a value the projected schema s (in the tool schema root, for
// its $defs) accepts, with every nullable member null: the answer that
// leaves out every optional property.
func minimal(v any, root map[string]any, depth int) any {
	s, _ := v.(map[string]any)
	if depth > 40 || s == nil {
		return nil
	}
	if ref, ok := s["$ref"].(string); ok {
		for _, k := range []string{"$defs", "definitions"} {
			if name, ok := strings.CutPrefix(ref, "#/"+k+"/"); ok {
				defs, _ := root[k].(map[string]any)
				return minimal(defs[name], root, depth+1)
			}
		}
		return nil
	}
	if list, ok := s["anyOf"].([]any); ok {
		for _, b := range list {
			if bm, _ := b.(map[string]any); bm["type"] == "null" {
				return nil
			}
		}
		// A branch that does not refer back first: it ends.
		for _, b := range list {
			if !strings.Contains(string(mustJSON(b)), "$ref") {
				return minimal(b, root, depth+1)
			}
		}
		return minimal(list[0], root, depth+1)
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	if c, ok := s["const"]; ok {
		return c
	}
	t := s["type"]
	if list, ok := t.([]any); ok {
		t = list[0]
		if slices.Contains(list, any("null")) {
			return nil
		}
	}
	switch t {
	case "object":
		out := map[string]any{}
		props, _ := s["properties"].(map[string]any)
		req, _ := s["required"].([]any)
		for _, r := range req {
			name := r.(string)
			out[name] = minimal(props[name], root, depth+1)
		}
		return out
	case "array":
		out := []any{}
		n, _ := s["minItems"].(float64)
		for range int(n) {
			out = append(out, minimal(s["items"], root, depth+1))
		}
		return out
	case "string":
		if s["description"] == "Any JSON value, written as JSON text in this string." {
			return "null"
		}
		if f, ok := s["format"].(string); ok {
			return map[string]string{"date-time": "2024-01-02T03:04:05Z", "date": "2024-01-02", "time": "03:04:05Z", "duration": "P1D",
				"email": "a@example.com", "hostname": "example.com", "ipv4": "127.0.0.1", "ipv6": "::1", "uuid": "123e4567-e89b-12d3-a456-426614174000", "uri": "https://example.com/"}[f]
		}
		if p, ok := s["pattern"].(string); ok {
			if re, err := regexp.Compile(p); err == nil {
				for _, cand := range []string{"a", "A", "0", "1", "a1", "aa", "abc", "http://example.com", "1.0.0", "#000000", "a-b", "a_b", "a.b", ""} {
					if re.MatchString(cand) {
						return cand
					}
				}
			}
		}
		return "a"
	case "integer", "number":
		x := 0.0
		if m, ok := s["minimum"].(float64); ok && m > x {
			x = m
		}
		if m, ok := s["exclusiveMinimum"].(float64); ok && m >= x {
			x = m + 1
		}
		if m, ok := s["maximum"].(float64); ok && m < x {
			x = m
		}
		if m, ok := s["exclusiveMaximum"].(float64); ok && m <= x {
			x = m - 1
		}
		if m, ok := s["multipleOf"].(float64); ok && m > 0 {
			x = math.Ceil(x/m) * m
		}
		if t == "integer" {
			x = math.Ceil(x)
		}
		return x
	case "boolean":
		return false
	}
	return nil
}

var _ = fmt.Sprint
