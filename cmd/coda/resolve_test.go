package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine/llm"
)

// Model names as Leviath writes them resolve to the one provider that
// serves them; a name two providers serve, or none, is an error that says
// which, or what to write instead (DESIGN §25).
func TestConfig_resolveSpec(t *testing.T) {
	path := writeConfig(t, `
[providers.azure]
kind = "openai"
base_url = "https://example.openai.azure.com/openai/v1"
[providers.azure.models."gpt-5.5"]
effort = "high"

[providers.xai]
kind = "openai"
base_url = "https://api.x.ai/v1"
api_key_env = "XAI_API_KEY"

[providers.vllm]
kind = "openai"
base_url = "http://127.0.0.1:8000/v1"
context_windows = { "meta-llama/Llama-3.3-70B" = 131072, "qwen3.5:9b" = 32768 }
`)
	c, err := loadConfig(path, configEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	for spec, want := range map[string]string{
		"claude-sonnet-5":           "anthropic:claude-sonnet-5",
		"gemini-3-pro":              "gemini:gemini-3-pro",
		"o3":                        "openai:o3",
		"gpt-5.4-mini":              "openai:gpt-5.4-mini",
		"anthropic:claude-opus-5":   "anthropic:claude-opus-5",
		"ollama:qwen3.5:9b":         "ollama:qwen3.5:9b",
		"script:/tmp/m.toml":        "script:/tmp/m.toml",
		"deepseek/deepseek-v4":      "openrouter:deepseek/deepseek-v4",
		"anthropic/claude-sonnet-5": "anthropic:claude-sonnet-5",
		"openrouter/openai/gpt-5.5": "openrouter:openai/gpt-5.5",
		"meta-llama/Llama-3.3-70B":  "vllm:meta-llama/Llama-3.3-70B",
		"qwen3.5:9b":                "vllm:qwen3.5:9b",
		"vertex:gemini-2.5-pro":     "vertex:gemini-2.5-pro", // resolve names what is wrong
	} {
		got, err := c.catalog.Resolve(spec)
		if err != nil || got != want {
			t.Errorf("resolveSpec(%q) = %q, %v; want %q", spec, got, err, want)
		}
	}
	for spec, want := range map[string]string{
		"gpt-5.5":                              `model "gpt-5.5": both azure and openai serve it: name one, as azure:gpt-5.5 or openai:gpt-5.5`,
		"deepseek-v4-flash":                    `model "deepseek-v4-flash": no provider is known to serve it by that name: write PROVIDER:MODEL, e.g. anthropic:claude-sonnet-5-5, openai:gpt-5.5, gemini:gemini-4-hydrogen, openrouter:anthropic/claude-sonnet-5.5, or name it in a [providers.NAME.models."deepseek-v4-flash"] table of the config`,
		"gpt-oss-120b":                         `model "gpt-oss-120b": no provider is known to serve it`,
		"bedrock/us.anthropic.claude-sonnet-5": `model "bedrock/us.anthropic.claude-sonnet-5": bedrock is Leviath's provider for AWS Bedrock, which coda does not have`,
		"meshy:multi-image-to-3d":              `model meshy:multi-image-to-3d: unknown provider "meshy": meshy is Leviath's 3D-model provider: coda has no media providers`,
	} {
		_, err := c.models().Model(spec)
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("Model(%q): error %v, want %q", spec, err, want)
		}
		if !errors.Is(err, llm.ErrModelUnavailable) {
			t.Errorf("Model(%q): %v does not wrap ErrModelUnavailable: the stage would not try its next model", spec, err)
		}
		if why := c.catalog.Served(spec); !strings.HasPrefix(why, want) {
			t.Errorf("served(%q) = %q, want %q", spec, why, want)
		}
	}
}

// A bare name is a model like any other once resolved: the engine asks for
// it by the name the blueprint gave, and gets the provider that serves it,
// with the catalog's facts of that model.
func TestConfig_bareModel(t *testing.T) {
	c, err := loadConfig("", configEnv(map[string]string{"ANTHROPIC_API_KEY": "sk-a", "XDG_CONFIG_HOME": t.TempDir()}))
	if err != nil {
		t.Fatal(err)
	}
	m, err := c.models().Model("claude-sonnet-5")
	if err != nil {
		t.Fatal(err)
	}
	if m.Name() != "claude-sonnet-5" {
		t.Errorf("Name() = %q, want the blueprint's name", m.Name())
	}
	if f := c.catalog.Facts("claude-sonnet-5"); f.ContextWindow != 1_000_000 {
		t.Errorf("facts of claude-sonnet-5: window %d, want the catalog's 1000000", f.ContextWindow)
	}
	if err := c.catalog.Check("claude-sonnet-5"); err != nil {
		t.Errorf("preflight: %v", err)
	}
	if err := c.catalog.Check("gpt-5.5"); err == nil || !strings.Contains(err.Error(), "OPENAI_API_KEY") {
		t.Errorf("preflight of gpt-5.5 without its key: %v, want it to name OPENAI_API_KEY", err)
	}
}
