package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Leviath's blueprint examples (testdata/leviath, SOURCE.md says whence)
// as `coda validate` and `coda run` take them (DESIGN §25): each
// validates, or fails only where docs/leviath.md says it must, in its
// words; those that can run, run against the script model.

// leviathEnv keeps a test's coda away from the real home and any local
// Ollama, and gives it an empty config.
func leviathEnv(t *testing.T) (config string) {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(home, ".state"))
	t.Setenv("OLLAMA_HOST", "127.0.0.1:1")
	for _, k := range []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENROUTER_API_KEY"} {
		t.Setenv(k, "")
	}
	config = filepath.Join(home, "config.toml")
	if err := os.WriteFile(config, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	return config
}

// coda runs the command in-process and returns its exit code and output.
func coda(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := mainCode(context.Background(), args, strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

var findingLine = regexp.MustCompile(`: (error|warning|info)\[([a-z-]+)\] (?:([^ :]+):)?`)

func TestLeviath_validate(t *testing.T) {
	config := leviathEnv(t)
	xai := filepath.Join(t.TempDir(), "xai.toml")
	os.WriteFile(xai, []byte("[providers.xai]\nkind = \"openai\"\nbase_url = \"https://api.x.ai/v1\"\napi_key_env = \"XAI_API_KEY\"\n"), 0o600)
	const fragment = "warning[no-output-stage] " // a fragment of a blueprint: its answering stage is another example's
	tests := []struct {
		file   string
		config string
		want   []string // "severity[code] key"
		words  []string // what the refusals say (docs/leviath.md's words)
	}{
		{file: "outputs/1-smallest.toml"},
		{file: "outputs/2-any-shape.toml", want: []string{fragment}},
		{file: "outputs/3-json-schema.toml", want: []string{fragment}},
		{file: "outputs/4-fix-worker.toml"},
		{file: "outputs/5-declared-artifacts.toml", want: []string{fragment}},
		{file: "providers/1-fallback-list.toml", want: []string{fragment}},
		{file: "providers/2-meshy-build.toml", want: []string{
			"error[unknown-key] context.regions", "error[unknown-key] stages.build.output_routing", fragment, "error[unknown-model] stages.build.model",
		}, words: []string{"Leviath's context regions: coda has none", "Leviath's media routing: coda has no media providers", "meshy is Leviath's 3D-model provider: coda has no media providers"}},
		{file: "providers/3-bedrock-thinking.toml", want: []string{
			fragment, "warning[unreachable-stage] stages.review", "error[unknown-model] stages.plan.model", "error[unknown-model] stages.review.model",
		}, words: []string{"bedrock is Leviath's provider for AWS Bedrock, which coda does not have"}},
		{file: "providers/4-xai-picture.toml", want: []string{
			"error[unknown-key] stages.picture.output_routing", fragment, "error[unknown-model] stages.picture.model",
		}, words: []string{"Leviath's media routing", "add [providers.xai] with kind = \"openai\""}},
		{file: "providers/5-ollama-think.toml", want: []string{fragment}},
		{file: "issue/clip.toml", want: []string{"error[unknown-model] stages.clip.model"}, words: []string{"coda drives no image or video model"}},
		// With xAI's API configured, the clip resolves: its parameters and
		// timeout are taken (a video model it cannot drive is docs/leviath.md's).
		{file: "issue/clip.toml", config: xai},
		{file: "issue/allow-complete.toml", want: []string{"warning[allow-complete-skips-output] stages.review.allow_complete"}, words: []string{"flagged done_before_answer"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			cfg := config
			if tt.config != "" {
				cfg = tt.config
			}
			code, out, stderr := coda(t, "validate", "--config", cfg, filepath.Join("../../testdata/leviath", tt.file))
			var got []string
			for _, m := range findingLine.FindAllStringSubmatch(out, -1) {
				got = append(got, m[1]+"["+m[2]+"] "+m[3])
			}
			want := tt.want
			if want == nil {
				want = []string{}
			}
			if got == nil {
				got = []string{}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("findings (-want +got):\n%s\n%s", diff, out)
			}
			errs := slices.ContainsFunc(want, func(s string) bool { return strings.HasPrefix(s, "error") })
			if (code != 0) != errs {
				t.Errorf("exit %d with errors %v: %s", code, errs, stderr)
			}
			for _, w := range tt.words {
				if !strings.Contains(out, w) {
					t.Errorf("the findings do not say %q:\n%s", w, out)
				}
			}
			if errs && !strings.Contains(out, "(docs/leviath.md)") {
				t.Errorf("a refusal does not point at the migration page:\n%s", out)
			}
		})
	}
}

// The page's examples run: the smallest version alone, and with each of
// the answer shapes the page gives its summary stage (the page's
// fragments laid after it, as the page lays them); allow_complete before
// the answer ends the run without one, and says so.
func TestLeviath_run(t *testing.T) {
	config := leviathEnv(t)
	read := func(name string) string {
		data, err := os.ReadFile(filepath.Join("../../testdata/leviath", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	const toSummary = `
[[turn]]
[[turn.tool_calls]]
name = "transition"
arguments = { to = "summary", reason = "done" }
`
	tests := []struct {
		name, blueprint, model string
		code                   int
		status, format         string
		flags                  []string
	}{
		{"smallest", read("outputs/1-smallest.toml"), toSummary + `
[[turn]]
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "Changed main.go: the flag parser." }
`, 0, "answered", "markdown", nil},
		{"any shape", read("outputs/1-smallest.toml") + read("outputs/2-any-shape.toml"), toSummary + `
[[turn]]
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = '{"root": {"component": "Card", "children": [{"component": "Text"}]}}' }
`, 0, "answered", "a2ui", nil},
		{"json schema", read("outputs/1-smallest.toml") + read("outputs/3-json-schema.toml"), toSummary + `
[[turn]]
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = '{"summary": "Changed the parser."}' }
[[turn]]
expect = "files_changed"
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = '{"summary": "Changed the parser.", "files_changed": ["main.go"]}' }
`, 0, "answered", "json", nil},
		{"allow_complete before the answer", read("issue/allow-complete.toml"), `
[[turn]]
[[turn.tool_calls]]
name = "transition"
arguments = { to = "DONE", reason = "nothing to say" }
`, 3, "complete (no output)", "", []string{"done_before_answer"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			bp, model := filepath.Join(dir, "blueprint.toml"), filepath.Join(dir, "model.toml")
			os.WriteFile(bp, []byte(tt.blueprint), 0o600)
			os.WriteFile(model, []byte(tt.model), 0o600)
			work := filepath.Join(dir, "work")
			os.Mkdir(work, 0o700)
			code, out, stderr := coda(t, "run", "--config", config, "--agent", bp, "--model", "script:"+model,
				"--state-dir", filepath.Join(dir, "state"), "--cwd", work, "--json", "Summarise the change.")
			var rec struct {
				Status string   `json:"status"`
				Format string   `json:"format"`
				Flags  []string `json:"flags"`
			}
			if err := json.Unmarshal([]byte(out), &rec); err != nil {
				t.Fatalf("exit %d, not one JSON record: %v\n%s\n%s", code, err, out, stderr)
			}
			if code != tt.code || rec.Status != tt.status || rec.Format != tt.format {
				t.Errorf("exit %d, status %q, format %q; want %d, %q, %q\n%s", code, rec.Status, rec.Format, tt.code, tt.status, tt.format, stderr)
			}
			for _, f := range tt.flags {
				if !slices.Contains(rec.Flags, f) {
					t.Errorf("flags %q lack %s", rec.Flags, f)
				}
			}
		})
	}
}

// Leviath's [mime] limits in the config: max_part_bytes is taken; the
// part limits of its typed parts are refused, saying why.
func TestLeviath_mimeConfig(t *testing.T) {
	leviathEnv(t)
	_, err := loadConfig("../../testdata/leviath/mime/config.toml", os.Getenv)
	if err == nil || !strings.Contains(err.Error(), "unknown key mime.inline_text_bytes: coda's [mime] takes max_part_bytes and overwrite_artifacts") {
		t.Errorf("error %v", err)
	}
}
