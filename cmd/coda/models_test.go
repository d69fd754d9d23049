package main

import (
	"strings"
	"testing"
)

func TestModelFacts_noTools(t *testing.T) {
	tests := []struct {
		spec   string
		lacks  bool
		reason string
	}{
		{"ollama:gemma3:4b", true, "gemma3"},
		{"ollama:gemma3", true, "gemma3"},
		{"ollama:llama3", true, "llama3"},
		{"ollama:llama3.1:8b", false, ""},
		{"ollama:qwen3:4b", false, ""},
		{"ollama:nomic-embed-text", true, "embedding"},
		{"openai:text-embedding-3-small", true, "embedding"},
		{"openai:o1-mini", true, "o1-mini"},
		{"openai:o1-mini-2024-09-12", true, "o1-mini"},
		{"openrouter:openai/o1-preview", true, "o1-preview"},
		{"openai:o1", false, ""},
		{"openai:gpt-5.1", false, ""},
		{"openai:GPT-3.5-Turbo-Instruct", true, "completions-only"},
		{"anthropic:claude-sonnet-4-5", false, ""},
		// gemma elsewhere than Ollama may be served with a tool template.
		{"openrouter:google/gemma-3-27b-it", false, ""},
		{"local:gemma3", false, ""},
		{"script:/tmp/gemma3.toml", false, ""},
		{"nonsense", false, ""},
	}
	for _, tt := range tests {
		got := modelFacts(tt.spec).NoTools
		if (got != "") != tt.lacks || !strings.Contains(got, tt.reason) {
			t.Errorf("modelFacts(%q).NoTools = %q; want lacks=%v mentioning %q", tt.spec, got, tt.lacks, tt.reason)
		}
	}
}

func TestModelFacts_contextWindow(t *testing.T) {
	for spec, want := range map[string]int{
		"openai:gpt-5.1":                       400_000,
		"openai:gpt-4o-mini":                   128_000,
		"openai:gpt-4.1-nano":                  1_047_576,
		"openai:o1-mini":                       128_000,
		"openai:o1-preview":                    200_000,
		"openai:o3":                            200_000,
		"anthropic:claude-sonnet-4-5":          200_000,
		"openrouter:anthropic/claude-opus-4.1": 200_000,
		"ollama:llama3.1:8b":                   131_072,
		"ollama:llama3":                        0,
		"openrouter:meta-llama/llama-3.3-70b":  131_072,
		"local:my-finetune":                    0,
		"script:/tmp/claude-x.toml":            0,
	} {
		if got := modelFacts(spec).ContextWindow; got != want {
			t.Errorf("modelFacts(%q).ContextWindow = %d, want %d", spec, got, want)
		}
	}
}
