package validators

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// yamlBomb is the 342-byte "billion laughs" of issue 9: nine anchors, each
// a list of nine aliases to the one before, 9^9 values when expanded.
func yamlBomb() string {
	doc := "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n"
	prev := "a"
	for _, c := range "bcdefghi" {
		n := string(c)
		doc += n + ": &" + n + " [" + strings.TrimSuffix(strings.Repeat("*"+prev+",", 9), ",") + "]\n"
		prev = n
	}
	return doc
}

func TestYAML_aliasBomb(t *testing.T) {
	bomb := yamlBomb()
	if len(bomb) != 342 {
		t.Fatalf("the bomb is %d bytes", len(bomb))
	}
	const msg = "stand for more than 262144 values when expanded: write the repeated parts out"
	runChecks(t, "yaml", []checkCase{
		{"the bomb is refused at the alias that passes the bound", bomb, fails(6, -1, msg)},
		{"nested deeper, still refused", bomb + "j: &j [*i, *i]\nk: [*j, *j, *j]\n", fails(6, -1, msg)},
		{"in a sequence", "- &a [x, x, x, x, x, x, x, x]\n- &b [*a, *a, *a, *a, *a, *a, *a, *a]\n- &c [*b, *b, *b, *b, *b, *b, *b, *b]\n- &d [*c, *c, *c, *c, *c, *c, *c, *c]\n- &e [*d, *d, *d, *d, *d, *d, *d, *d]\n- &f [*e, *e, *e, *e, *e, *e, *e, *e]\n- &g [*f, *f, *f, *f, *f, *f, *f, *f]\n", fails(6, -1, msg)},
		{"a few aliases pass", "defaults: &d {retries: 3, timeout: 10}\nprod:\n  <<: *d\n  timeout: 30\nstaging: *d\nhosts: &h [a, b]\nall: [*h, *h]\n", ok},
		{"an alias inside its own anchor", "a: &x [1, *x]\n", ok},
		{"stars in text are no aliases", "note: \"*bold* and **more**\"\nx: a*b\n", ok},
	})

	// Decode is bounded the same way, and the few aliases expand.
	if _, err := Decode("yaml", bomb); err == nil || !strings.Contains(err.Error(), msg) {
		t.Errorf("Decode(bomb) = %v", err)
	}
	v, err := Decode("yaml", "base: &b {a: 1}\nuse: *b\n")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"base": map[string]any{"a": int64(1)}, "use": map[string]any{"a": int64(1)}}, v); diff != "" {
		t.Errorf("Decode (-want +got):\n%s", diff)
	}

	// JSON's diagnosis tries the answer as YAML: bounded too.
	if err := Check("json", bomb); err == nil || strings.Contains(err.Error(), "this is YAML") {
		t.Errorf("Check(json, bomb) = %v, want a refusal that does not call the bomb YAML data", err)
	}
}

func TestHelpers_parseYAMLAliasBomb(t *testing.T) {
	v := compile(t, "def validate(content):\n    parse_yaml(content)\n")
	_, err := v.Validate(context.Background(), yamlBomb())
	var se *ScriptError
	if !errors.As(err, &se) || !strings.Contains(se.Msg, "parse_yaml: line 6, column") || !strings.Contains(se.Msg, "stand for more than 262144 values") {
		t.Fatalf("Validate = %v, want a broken validator naming the alias bound", err)
	}

	v = compile(t, "def validate(content):\n    if parse_yaml(content, default=None) == None:\n        return 'not YAML I can read'\n")
	if reason, err := v.Validate(context.Background(), yamlBomb()); err != nil || reason != "not YAML I can read" {
		t.Errorf("with default: %q, %v", reason, err)
	}

	v = compile(t, "def validate(content):\n    return json.encode(parse_yaml(content))\n")
	got, err := v.Validate(context.Background(), "base: &b [1, 2]\nuse: *b\n")
	if err != nil || got != `{"base":[1,2],"use":[1,2]}` {
		t.Errorf("a few aliases: %q, %v", got, err)
	}
	if got, err := v.Validate(context.Background(), ""); err != nil || got != "null" {
		t.Errorf("an empty document: %q, %v", got, err)
	}
}
