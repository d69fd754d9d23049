package catalog

import (
	"errors"
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine/llm"
)

// The catalog's answers from one config: a spec resolved with its key and
// what it is sent, a missing key named, the levels a model takes and the
// one it is given.
func TestCatalog_serve(t *testing.T) {
	c, err := testCatalog(`
[providers.openai]
effort = "high"
[providers.openai.models."gpt-5.4-mini"]
effort = "xhigh"
vision = false
`, testEnv(map[string]string{"OPENAI_API_KEY": " sk-o "}))
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.Serve("gpt-5.4-mini")
	if err != nil {
		t.Fatal(err)
	}
	if r.Spec != "openai:gpt-5.4-mini" || r.Key != "sk-o" || r.Effort != "xhigh" || r.Sees || r.Facts.ContextWindow != 400_000 {
		t.Errorf("Serve(gpt-5.4-mini) = %+v", r)
	}
	if r, err := c.Serve("script:/tmp/x.toml"); err != nil || r.Name != "script" || r.Model != "/tmp/x.toml" {
		t.Errorf("Serve(script) = %+v, %v", r, err)
	}
	_, err = c.Serve("anthropic:claude-sonnet-5-5")
	if !errors.As(err, new(MissingKey)) || !errors.Is(err, llm.ErrModelUnavailable) || !strings.Contains(err.Error(), "ANTHROPIC_API_KEY") {
		t.Errorf("Serve without the key: %v", err)
	}
	if takes, launch := c.Efforts("openai:gpt-5.5"); launch != "high" || len(takes) == 0 {
		t.Errorf("Efforts(gpt-5.5) = %v, %q", takes, launch)
	}
	if err := c.SetEffort("max"); err != nil {
		t.Fatal(err)
	}
	if err := c.Check("openai:gpt-5.5"); !errors.Is(err, ErrEffort) {
		t.Errorf("Check at --effort max: %v, want an EffortError", err)
	}
	if err := c.SetEffort("extreme"); err == nil {
		t.Error("SetEffort(extreme) took it")
	}
}

// The default: the config's, else what SetDefault set, else what a
// search finds (nothing while it looks, unless waited for).
func TestCatalog_default(t *testing.T) {
	c := New(Options{Default: "openai:gpt-5.5", Getenv: testEnv(nil)})
	if got := c.Default(false); got != "openai:gpt-5.5" {
		t.Errorf("Default = %q", got)
	}
	c = New(Options{Getenv: testEnv(map[string]string{"OLLAMA_HOST": "127.0.0.1:1"})})
	if got := c.Default(true); got != "" {
		t.Errorf("Default without any = %q", got)
	}
	c.Search()
	if got := c.Default(true); got != "" {
		t.Errorf("Default after a search where no Ollama answers = %q", got)
	}
	c.SetDefault(EnvDefault(testEnv(map[string]string{"GOOGLE_API_KEY": "g"})))
	if got := c.Default(false); got != "gemini:"+DefaultModel("gemini") {
		t.Errorf("Default from GOOGLE_API_KEY = %q", got)
	}
}
