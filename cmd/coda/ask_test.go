package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ttyInput is stdin as a terminal: what the user types.
type ttyInput struct{ *strings.Reader }

func (ttyInput) IsTerminal() bool { return true }

// runAsking runs `coda run` with an agent whose stage offers ask_user and
// the script model script, stdin being stdin; it returns stdout, stderr,
// the state directory and the run's error.
func runAsking(t *testing.T, script string, stdin any) (string, string, string, error) {
	t.Helper()
	work := t.TempDir()
	for k, v := range map[string]string{
		"HOME": work, "XDG_CONFIG_HOME": filepath.Join(work, ".config"), "XDG_STATE_HOME": filepath.Join(work, ".state"),
		"OLLAMA_HOST": "127.0.0.1:1",
	} {
		t.Setenv(k, v)
	}
	agent := filepath.Join(work, "blueprint.toml")
	bp := "[agent]\nname = \"asker\"\n[stages.answer]\nmode = \"output\"\nsystem_prompt = \"Answer; ask the user what only they know.\"\navailable_tools = [\"ask_user\"]\n"
	model := filepath.Join(work, "model.toml")
	if err := os.WriteFile(agent, []byte(bp), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(model, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(work, "state")
	var stdout, stderr bytes.Buffer
	args := []string{"--agent", agent, "--model", "script:" + model, "--state-dir", state, "--cwd", work, "Is the deploy healthy?"}
	var err error
	switch in := stdin.(type) {
	case ttyInput:
		err = runOnce(context.Background(), args, in, &stdout, &stderr)
	case *strings.Reader:
		err = runOnce(context.Background(), args, in, &stdout, &stderr)
	default:
		err = runOnce(context.Background(), args, nil, &stdout, &stderr)
	}
	return stdout.String(), stderr.String(), state, err
}

// askThen is a script whose first turn calls ask_user with args and whose
// second expects want and answers "Done.".
func askThen(args, want string) string {
	return `
[[turn]]
[[turn.tool_calls]]
name = "ask_user"
` + argsKey(args) + ` = ` + args + `

[[turn]]
expect = '''` + want + `'''
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "Done." }
`
}

// argsKey is the script's key for args: raw_arguments for a JSON string.
func argsKey(args string) string {
	if strings.HasPrefix(args, `"""`) {
		return "raw_arguments"
	}
	return "arguments"
}

// On a terminal, `coda run` asks the model's question on stderr and reads
// the answer from stdin: a choice by its number, a form a field a line
// (a line that is not the field's type is asked again), an empty line
// declines, the end of stdin dismisses. The answer reaches the model's
// next call (the script's expect).
func TestRunOnce_asksOnTerminal(t *testing.T) {
	choices := `{ question = "Which environment should I check?", choices = ["staging", "prod"] }`
	// Raw, so the form's fields keep the order the model wrote them in.
	form := `"""{"question": "Who runs it?", "fields": {"type": "object", "properties": {"name": {"type": "string", "title": "Name"}, "count": {"type": "integer"}, "notes": {"type": "string"}}, "required": ["name"]}}"""`
	for _, tc := range []struct {
		name, args, typed, want string
		shown                   []string
	}{
		{"a choice by number", choices, "2\n", "The user answered: prod",
			[]string{"coda asks: Which environment should I check?\n", "  1) staging\n  2) prod\n", "answer 1-2 (an empty line declines): "}},
		{"a choice by text, after one that is none", choices, "qa\nStaging\n", "The user answered: staging",
			[]string{`"qa" is none of the choices`}},
		{"free text", `{ question = "Which branch?" }`, "release-2\n", "The user answered: release-2",
			[]string{"coda asks: Which branch?\nanswer (an empty line declines): "}},
		{"a form, a field a line", form, "Ada\nmany\n3\n\n", `The user answered: {"count":3,"name":"Ada"}`,
			[]string{"coda asks: Who runs it?\n", "Name (string, required): ", "count (integer): ", `"many" is not integer`, "notes (string): "}},
		{"an empty line declines", choices, "\n", "The user declined to answer.", nil},
		{"a required field left empty declines", form, "\n", "The user declined to answer.", nil},
		{"the end of stdin dismisses", choices, "", "The user dismissed the question without answering.", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, _, err := runAsking(t, askThen(tc.args, tc.want), ttyInput{strings.NewReader(tc.typed)})
			if err != nil || stdout != "Done.\n" {
				t.Fatalf("coda run = %v, stdout %q\nstderr:\n%s", err, stdout, stderr)
			}
			for _, s := range tc.shown {
				if !strings.Contains(stderr, s) {
					t.Errorf("stderr lacks %q:\n%s", s, stderr)
				}
			}
		})
	}
}

// Without a terminal (a pipe, or no stdin at all) nobody can answer:
// ask_user is not offered, so the model that calls it is told there is no
// such tool, and the run does not wait. On a terminal the same call asks.
func TestRunOnce_asksNothingOffTerminal(t *testing.T) {
	script := askThen(`{ question = "Which environment should I check?" }`, `There is no tool "ask_user" in this stage.`)
	for name, stdin := range map[string]any{"a pipe": strings.NewReader("staging\n"), "no stdin": nil} {
		t.Run(name, func(t *testing.T) {
			stdout, stderr, _, err := runAsking(t, script, stdin)
			if err != nil || stdout != "Done.\n" {
				t.Fatalf("coda run = %v, stdout %q\nstderr:\n%s", err, stdout, stderr)
			}
			if strings.Contains(stderr, "coda asks") {
				t.Errorf("the run asked off a terminal:\n%s", stderr)
			}
		})
	}
	// The control: on a terminal the call asks, and the script's expect
	// fails on the answer.
	_, stderr, _, err := runAsking(t, script, ttyInput{strings.NewReader("staging\n")})
	if err == nil || !strings.Contains(stderr, "coda asks: Which environment should I check?") {
		t.Errorf("on a terminal: coda run = %v, want the question asked and the script's expect to fail\nstderr:\n%s", err, stderr)
	}
}

// The null device, a pipe, a file and a reader are no terminal: `coda run
// </dev/null` in a script asks nothing.
func TestIsTerminal(t *testing.T) {
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	file, err := os.Open(filepath.Join("ask_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	for name, in := range map[string]io.Reader{"the null device": null, "a pipe": r, "a file": file, "a reader": strings.NewReader("x"), "nil": nil} {
		if isTerminal(in) {
			t.Errorf("isTerminal(%s) = true", name)
		}
	}
	if !isTerminal(ttyInput{strings.NewReader("")}) {
		t.Errorf("isTerminal(a ttyReader that says so) = false")
	}
}
