package outputspec

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/BurntSushi/toml"
	"github.com/google/go-cmp/cmp"
)

func mustCompile(t testing.TB, s Spec) *Contract {
	t.Helper()
	c, err := Compile(s)
	if err != nil {
		t.Fatalf("Compile(%+v): %v", s, err)
	}
	return c
}

func testdata(p string) string {
	abs, err := filepath.Abs(filepath.Join("testdata", filepath.FromSlash(p)))
	if err != nil {
		panic(err)
	}
	return abs
}

// submit checks content (a Go string, encoded as the content argument).
func submit(c *Contract, content string) Verdict {
	return c.Check(context.Background(), Submission{Args: contentArgs(content), Stages: []string{"review", "summary"}})
}

func contentArgs(content string) json.RawMessage {
	b, err := json.Marshal(map[string]string{"content": content})
	if err != nil {
		panic(err)
	}
	return b
}

// expect asserts the verdict's acceptance and that its feedback contains
// every one of want, in order.
func expect(t *testing.T, v Verdict, accepted bool, want ...string) {
	t.Helper()
	if v.Accepted != accepted {
		t.Errorf("Accepted = %v, want %v; feedback:\n%s", v.Accepted, accepted, v.Feedback)
	}
	rest := v.Feedback
	for _, w := range want {
		i := strings.Index(rest, w)
		if i < 0 {
			t.Errorf("feedback does not contain %q (in order):\n%s", w, v.Feedback)
			return
		}
		rest = rest[i+len(w):]
	}
}

func TestContract_Check_arguments(t *testing.T) {
	c := mustCompile(t, Spec{Format: "json"})
	tests := []struct {
		args     string
		accepted bool
		want     string
	}{
		{`{"content": "{\"a\": 1}"}`, true, ""},
		{`{"content": "{}", "artifacts": []}`, true, ""},
		{`{"content": "{}", "artifacts": null}`, true, ""},
		{``, false, `The "content" string is missing: submit_output takes {"content": "<the answer>"`},
		{`{}`, false, `The "content" string is missing`},
		{`{"content": null}`, false, `The "content" string is missing`},
		{`[1]`, false, "The arguments are not a JSON object"},
		{`{"content": {"a": 1}}`, false, `"content" must be a string holding the answer's text (for a JSON answer, the JSON document written out as a string), not an object.`},
		{`{"content": 3}`, false, "not a number"},
		{`{"content": "{}", "format": "json", "answer": 1}`, false, `Unknown argument "answer", "format": submit_output takes`},
		{`{"content": "{}", "artifacts": "a.md"}`, false, `"artifacts" must be an array of paths or {"name", "path", "type"} objects, not a string.`},
		{`{"content": "{}", "artifacts": [""]}`, false, "artifacts[0] is an empty path"},
		{`{"content": "{}", "artifacts": ["a.md", {"name": "x"}]}`, false, "artifacts[1] has no path"},
		{`{"content": "{}", "artifacts": [{"path": "a", "size": 3}]}`, false, `artifacts[0] has an unknown field "size"`},
		{`{"content": "{}", "artifacts": [{"path": 3}]}`, false, `artifacts[0] field "path" must be a string, not a number`},
		{`{"content": "{}", "artifacts": [7]}`, false, "artifacts[0] is a number"},
		{`{"content": "   \n\t"}`, false, `The answer is empty: submit the answer itself in "content".`},
		{`{"content": ""}`, false, "The answer is empty"},
		{`{"content": "summary"}`, false, `"summary" is the name of a stage, not an answer`},
		{`{"content": " \"Review\"\n"}`, false, `"review" is the name of a stage, not an answer`},
	}
	for _, tt := range tests {
		v := c.Check(context.Background(), Submission{Args: json.RawMessage(tt.args), Stages: []string{"review", "summary"}})
		if v.Accepted != tt.accepted || !strings.Contains(v.Feedback, tt.want) {
			t.Errorf("Check(%s) = accepted %v, %q; want %v, %q", tt.args, v.Accepted, v.Feedback, tt.accepted, tt.want)
		}
	}
}

// The hand-written argument check and the schema the model is given must
// agree: compile ToolSchema and compare their verdicts over a table.
func TestContract_ToolSchema_agreesWithCheck(t *testing.T) {
	c := mustCompile(t, Spec{Format: "text"})
	schema, err := compileSchema(c.ToolSchema())
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range []string{
		`{"content": "x"}`, `{}`, `{"content": 1}`, `{"content": "x", "more": 1}`,
		`{"content": "x", "artifacts": ["a"]}`, `{"content": "x", "artifacts": [""]}`,
		`{"content": "x", "artifacts": [{"path": "a", "name": "n", "type": "t/t"}]}`,
		`{"content": "x", "artifacts": [{"name": "n"}]}`, `{"content": "x", "artifacts": [{"path": "a", "x": 1}]}`,
		`{"content": "x", "artifacts": [1]}`, `{"content": "x", "artifacts": {}}`, `[]`,
	} {
		var data any
		if err := json.Unmarshal([]byte(args), &data); err != nil {
			t.Fatal(err)
		}
		bySchema := schema.Validate(data) == nil
		_, problem := parseArgs(json.RawMessage(args))
		if byCheck := problem == ""; byCheck != bySchema {
			t.Errorf("%s: schema says valid=%v, parseArgs says %v (%q)", args, bySchema, byCheck, problem)
		}
	}
}

func TestContract_Check_wellFormedBeforeSchema(t *testing.T) {
	c := mustCompile(t, Spec{Format: "json", SchemaFile: testdata("schemas/findings.json")})
	v := submit(c, "```json\n{\"title\": 3}\n```")
	expect(t, v, false, "The answer is not well-formed JSON (line 1): ", "code fence")
	if strings.Contains(v.Feedback, "Schema") {
		t.Errorf("schema reported before well-formedness:\n%s", v.Feedback)
	}
	expect(t, submit(c, `{"title": "t", "findings": [{"severity": "high", "line": 3}]}`), true)
}

func TestContract_Check_schema(t *testing.T) {
	findings := Spec{Format: "json", SchemaFile: testdata("schemas/findings.json")}
	t.Run("violations with pointers", func(t *testing.T) {
		c := mustCompile(t, findings)
		v := submit(c, `{"title": "", "findings": [{"severity": "high", "line": 1}, {"severity": "urgent", "line": 0}]}`)
		expect(t, v, false, "The answer does not satisfy the JSON Schema (3 violations):", "/findings/1")
		for _, p := range []string{"/title", "/findings/1/severity", "/findings/1/line"} {
			if !strings.Contains(v.Feedback, p) {
				t.Errorf("feedback lacks %s:\n%s", p, v.Feedback)
			}
		}
	})
	t.Run("capped at 20 lines plus the total", func(t *testing.T) {
		c := mustCompile(t, findings)
		var items []string
		for range 30 {
			items = append(items, `{"severity": "none", "line": 1}`)
		}
		v := submit(c, `{"title": "t", "findings": [`+strings.Join(items, ",")+`]}`)
		expect(t, v, false, "(30 violations)", "/findings/0/severity")
		if n := strings.Count(v.Feedback, "/findings/"); n > 20 {
			t.Errorf("%d violations listed, want at most 20:\n%s", n, v.Feedback)
		}
		if !strings.Contains(v.Feedback, "30") || strings.Contains(v.Feedback, "/findings/29/") {
			t.Errorf("want the total and no 30th line:\n%s", v.Feedback)
		}
	})
	t.Run("yaml answers via their data", func(t *testing.T) {
		c := mustCompile(t, Spec{Format: "yml", SchemaFile: findings.SchemaFile})
		expect(t, submit(c, "title: t\nfindings:\n  - severity: low\n    line: 2\n"), true)
		expect(t, submit(c, "title: t\nfindings:\n  - severity: low\n    line: two\n"), false, "/findings/0/line")
		expect(t, submit(c, "```yaml\ntitle: t\n```"), false, "The answer is not well-formed YAML (line 1): ", "code fence")
		expect(t, submit(c, "? - a\n: b\nc: d\n"), false, "The answer cannot be read (line 1): coda cannot read complex keys")
	})
	t.Run("toml answers via their data", func(t *testing.T) {
		c := mustCompile(t, Spec{Format: "toml", SchemaFile: findings.SchemaFile})
		expect(t, submit(c, "title = \"t\"\n[[findings]]\nseverity = \"low\"\nline = 2\n"), true)
		expect(t, submit(c, "title = \"t\"\n"), false, "findings")
		expect(t, submit(c, "title: t\n"), false, "The answer is not well-formed TOML (line 1): ", "written as YAML")
	})
	t.Run("inline schema from a TOML table", func(t *testing.T) {
		var bp struct {
			Output Spec `toml:"output"`
		}
		src := "[output]\nformat = \"json\"\nschema = { type = \"object\", required = [\"n\"], properties = { n = { type = \"integer\", maximum = 10 } } }\n"
		if _, err := toml.Decode(src, &bp); err != nil {
			t.Fatal(err)
		}
		c := mustCompile(t, bp.Output)
		expect(t, submit(c, `{"n": 3}`), true)
		expect(t, submit(c, `{"n": 11}`), false, "/n")
	})
	t.Run("a schema for xml is not applied, and says so", func(t *testing.T) {
		c := mustCompile(t, Spec{Format: "xml", SchemaFile: findings.SchemaFile})
		v := submit(c, "<a/>")
		expect(t, v, true)
		want := []string{"schema findings.json ignored: a JSON Schema checks json, yaml and toml answers, and the format is xml"}
		if diff := cmp.Diff(want, c.Warnings()); diff != "" {
			t.Errorf("warnings (-want +got):\n%s", diff)
		}
		if len(v.Warnings) != 0 {
			t.Errorf("the verdict repeats the contract's warnings: %q", v.Warnings)
		}
		if strings.Contains(c.ToolDescription(), "JSON Schema") {
			t.Errorf("an unapplied schema is shown to the model:\n%s", c.ToolDescription())
		}
	})
}

func TestContract_Check_schemaFailsOpen(t *testing.T) {
	for _, file := range []string{"schemas/unresolved_ref.json", "schemas/bad_keyword.json", "schemas/remote_ref.json"} {
		t.Run(file, func(t *testing.T) {
			c := mustCompile(t, Spec{Format: "json", SchemaFile: testdata(file)})
			if c.SchemaUnchecked() == "" {
				t.Fatal("SchemaUnchecked() is empty")
			}
			v := submit(c, `{"a": 1}`)
			expect(t, v, true)
			if diff := cmp.Diff([]string{FlagSchemaUnchecked}, v.Flags); diff != "" {
				t.Errorf("flags (-want +got):\n%s", diff)
			}
			if w := c.Warnings(); len(w) != 1 || w[0] != c.SchemaUnchecked() || !strings.Contains(w[0], "schema "+filepath.Base(file)+" unchecked: ") {
				t.Errorf("contract warnings = %q", w)
			}
			if len(v.Warnings) != 0 {
				t.Errorf("the verdict repeats the contract's warning: %q", v.Warnings)
			}
			// Well-formedness still applies.
			expect(t, submit(c, `{"a": 1} trailing`), false, "not well-formed JSON")
		})
	}
}

// format is asserted for the formats the providers' strict modes know,
// unless the spec says assert_format = false (DESIGN §20).
func TestContract_Check_assertFormat(t *testing.T) {
	schema := map[string]any{"type": "object", "properties": map[string]any{
		"email": map[string]any{"type": "string", "format": "email"},
		"when":  map[string]any{"type": "string", "format": "date"},
		"zip":   map[string]any{"type": "string", "format": "zip-code"}}}
	for _, assert := range []*bool{nil, ptr(true)} {
		c := mustCompile(t, Spec{Format: "json", Schema: schema, AssertFormat: assert})
		expect(t, submit(c, `{"email": "a@example.com", "when": "2026-12-06", "zip": "anything"}`), true)
		expect(t, submit(c, `{"email": "not an email", "when": "tomorrow"}`), false,
			"(2 violations)", "/email: Value does not match format 'email'", "/when: Value does not match format 'date'")
	}
	c := mustCompile(t, Spec{Format: "json", Schema: schema, AssertFormat: ptr(false)})
	expect(t, submit(c, `{"email": "not an email", "when": "tomorrow"}`), true)
	// A blueprint's [agent.output] or [stages.X.output] spells it assert_format.
	var bp struct {
		Output Spec `toml:"output"`
	}
	if _, err := toml.Decode("[output]\nformat = \"json\"\nassert_format = false\nschema = { properties = { e = { format = \"email\" } } }\n", &bp); err != nil {
		t.Fatal(err)
	}
	expect(t, submit(mustCompile(t, bp.Output), `{"e": "not an email"}`), true)
	// The same for yaml's data, and through the cascade.
	spec, _ := Resolve(levels(Spec{Format: "yaml", Schema: schema}, Spec{}, Spec{AssertFormat: ptr(false)}, Spec{}, Spec{}, Spec{}))
	expect(t, submit(mustCompile(t, spec), "email: not an email\n"), true)
	spec, _ = Resolve(levels(Spec{Format: "yaml", Schema: schema, AssertFormat: ptr(false)}, Spec{}, Spec{AssertFormat: ptr(true)}, Spec{}, Spec{}, Spec{}))
	expect(t, submit(mustCompile(t, spec), "email: not an email\n"), false, "/email: Value does not match format 'email'")
}

func TestContract_Check_truncation(t *testing.T) {
	t.Run("markdown cut at a character boundary and accepted", func(t *testing.T) {
		c := mustCompile(t, Spec{Format: "markdown"})
		// "é" is two bytes; an odd prefix makes the cap fall inside one.
		content := "#" + strings.Repeat("é", MaxAnswer/2+10)
		v := submit(c, content)
		expect(t, v, true, fmt.Sprintf("The answer is %d bytes, over the 262144-byte (256 KiB) cap: it was cut to its first 262143 bytes", len(content)),
			"Submit a shorter answer.", "The cut answer was accepted")
		if !v.Truncated || !utf8.ValidString(v.Content) || len(v.Content) != MaxAnswer-1 || !strings.HasPrefix(content, v.Content) {
			t.Errorf("Truncated %v, valid %v, len %d", v.Truncated, utf8.ValidString(v.Content), len(v.Content))
		}
		if diff := cmp.Diff([]string{FlagTruncated}, v.Flags); diff != "" {
			t.Errorf("flags (-want +got):\n%s", diff)
		}
	})
	t.Run("the cut answer still goes through the checks", func(t *testing.T) {
		c := mustCompile(t, Spec{Format: "json"})
		content := `{"a": "` + strings.Repeat("x", MaxAnswer) + `"}`
		v := submit(c, content)
		expect(t, v, false, "over the 262144-byte (256 KiB) cap", "The answer is not well-formed JSON")
		if !v.Truncated {
			t.Error("Truncated = false")
		}
	})
	t.Run("exactly the cap is not cut", func(t *testing.T) {
		c := mustCompile(t, Spec{Format: "text"})
		v := submit(c, strings.Repeat("a", MaxAnswer))
		expect(t, v, true)
		if v.Truncated || v.Feedback != "" {
			t.Errorf("Truncated %v, feedback %q", v.Truncated, v.Feedback)
		}
	})
}

func TestCut(t *testing.T) {
	for _, tt := range []struct {
		s    string
		n    int
		want string
	}{
		{"abc", 5, "abc"},
		{"abc", 2, "ab"},
		{"aé", 2, "a"},
		{"a€b", 3, "a"},
		{"a€b", 4, "a€"},
		{"😀😀", 7, "😀"},
	} {
		if got := cut(tt.s, tt.n); got != tt.want {
			t.Errorf("cut(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
}

func TestContract_Check_validator(t *testing.T) {
	t.Run("rejects with its reason", func(t *testing.T) {
		c := mustCompile(t, Spec{Format: "json", Validator: testdata("validators/has_title.star")})
		expect(t, submit(c, `{"title": "T"}`), true)
		expect(t, submit(c, `{"body": "T"}`), false, `The answer was refused by its validator: the answer has no "title": add one.`)
	})
	t.Run("well-formedness and schema come first", func(t *testing.T) {
		c := mustCompile(t, Spec{Format: "json", Validator: testdata("validators/has_title.star"), Schema: map[string]any{"required": []any{"body"}}})
		expect(t, submit(c, `{"body": 1`), false, "not well-formed JSON")
		expect(t, submit(c, `{"title": "t"}`), false, "JSON Schema")
	})
	t.Run("broken, reject: the error goes back to the model", func(t *testing.T) {
		c := mustCompile(t, Spec{Format: "json", Validator: testdata("validators/broken.star")})
		v := submit(c, `{}`)
		expect(t, v, false, "The answer's validator (broken.star) failed on this answer:", "the validator itself is broken")
		if strings.Contains(v.Feedback, testdata("validators")) {
			t.Errorf("feedback shows the validator's path on this machine:\n%s", v.Feedback)
		}
	})
	t.Run("broken, accept: recorded unchecked", func(t *testing.T) {
		c := mustCompile(t, Spec{Format: "json", Validator: testdata("validators/broken.star"), OnValidatorError: "accept"})
		v := submit(c, `{}`)
		expect(t, v, true)
		if diff := cmp.Diff([]string{FlagValidatorError}, v.Flags); diff != "" {
			t.Errorf("flags (-want +got):\n%s", diff)
		}
		if len(v.Warnings) != 1 || !strings.Contains(v.Warnings[0], "validator broken.star failed") || !strings.Contains(v.Warnings[0], "the validator itself is broken") {
			t.Errorf("warnings = %q", v.Warnings)
		}
	})
	t.Run("accept does not excuse a rejection", func(t *testing.T) {
		c := mustCompile(t, Spec{Format: "json", Validator: testdata("validators/has_title.star"), OnValidatorError: "accept"})
		expect(t, submit(c, `{}`), false, "refused by its validator")
	})
}

func TestCompile_errors(t *testing.T) {
	tests := []struct {
		name string
		spec Spec
		want []string // substrings of the one-line error
	}{
		{"missing schema file", Spec{Format: "json", SchemaFile: testdata("schemas/nope.json")},
			[]string{"schema file " + testdata("schemas/nope.json") + ": no such file"}},
		{"unparseable schema file", Spec{Format: "json", SchemaFile: testdata("schemas/unparseable.json")},
			[]string{"schema file " + testdata("schemas/unparseable.json") + ":5:3: invalid character '}'"}},
		{"missing validator", Spec{Validator: testdata("validators/nope.star")},
			[]string{"validator " + testdata("validators/nope.star") + ": no such file"}},
		{"validator syntax error", Spec{Validator: testdata("validators/syntax.star")},
			[]string{"validator", "syntax.star", ":1:"}},
		{"validate with two parameters", Spec{Validator: testdata("validators/two_params.star")},
			[]string{"validator", "two_params.star"}},
		{"rhai", Spec{Validator: testdata("validators/check.rhai")},
			[]string{"validator", "check.rhai", "Starlark"}},
		{"invalid spec", Spec{OnValidatorError: "maybe"}, []string{"on_validator_error"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Compile(tt.spec)
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			if strings.ContainsAny(msg, "\r\n") {
				t.Errorf("error is not one line: %q", msg)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q lacks %q", msg, w)
				}
			}
		})
	}
}

func TestCompile_format(t *testing.T) {
	for _, tt := range []struct{ label, want string }{
		{"", "markdown"}, {" Application/JSON ", "json"}, {"yml", "yaml"}, {"text/xml", "xml"}, {"application/vnd.acme", "application/vnd.acme"},
	} {
		c := mustCompile(t, Spec{Format: tt.label})
		if c.Format() != tt.want {
			t.Errorf("Compile(%q).Format() = %q, want %q", tt.label, c.Format(), tt.want)
		}
		if tt.label != "" && c.Spec().Format != tt.label {
			t.Errorf("Spec().Format = %q, want %q", c.Spec().Format, tt.label)
		}
	}
}

// A label with no built-in parser is carried through unchecked.
func TestContract_Check_uncheckedLabel(t *testing.T) {
	c := mustCompile(t, Spec{Format: "application/vnd.acme"})
	v := submit(c, "```\nanything { at all")
	expect(t, v, true)
	if v.Content != "```\nanything { at all" || len(v.Flags) != 0 {
		t.Errorf("content %q, flags %q", v.Content, v.Flags)
	}
}

// parseArgs reads the arguments as json.Unmarshal does, however deep they
// nest: the last of two members with one key wins, keys and content are
// unescaped, bad text becomes U+FFFD.
func TestParseArgs_readsAsEncodingJSON(t *testing.T) {
	deep := strings.Repeat("[", 1500) + strings.Repeat("]", 1500)
	for _, tt := range []struct {
		args, content, problem string
	}{
		{`{"content": "a", "content": "b"}`, "b", ""},
		{` {"con\u0074ent" : "x\ty\n\"z\"" } `, "x\ty\n\"z\"", ""},
		{`{"content": "\ud800 \u00e9 \ud83d\ude00 ` + "\xff" + `"}`, "\ufffd é 😀 \ufffd", ""},
		{`{"content": "x", "artifacts": [` + deep + `]}`, "x", "artifacts[0] is an array"},
		{`{"content": "x", "more": ` + deep + `}`, "", `Unknown argument "more"`},
		{`{"content": "x", "artifacts": null, "unavailable": null}`, "x", ""},
		{`{"content": {"a": 1}}`, "", "not an object"},
		{`{"content": "x",}`, "", "not a JSON object"},
		{`{"content": "x"} {}`, "", "not a JSON object"},
		{`{"unavailable": "no data", "content": "  ", "artifacts": []}`, "", ""},
		{`{"unavailable": "no data", "artifacts": [ ]}`, "", `"artifacts" go with an answer`},
	} {
		a, problem := parseArgs(json.RawMessage(tt.args))
		if a.content != tt.content || !strings.Contains(problem, tt.problem) || (tt.problem == "") != (problem == "") {
			t.Errorf("parseArgs(%.60s) = %q, %q; want %q, %q", tt.args, a.content, problem, tt.content, tt.problem)
		}
	}
}
