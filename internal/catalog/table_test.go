package catalog

import (
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/provider/anthropic"
	"github.com/coda-acp/coda/engine/provider/gemini"
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
		got := Fact(tt.spec).NoTools
		if (got != "") != tt.lacks || !strings.Contains(got, tt.reason) {
			t.Errorf("Fact(%q).NoTools = %q; want lacks=%v mentioning %q", tt.spec, got, tt.lacks, tt.reason)
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
		if got := Fact(spec).ContextWindow; got != want {
			t.Errorf("Fact(%q).ContextWindow = %d, want %d", spec, got, want)
		}
	}
}

// Every pattern is one path.Match takes: a malformed one matches nothing,
// silently.
func TestModelCatalog_patterns(t *testing.T) {
	for _, e := range modelCatalog {
		if _, err := path.Match(e.pattern, "x"); err != nil {
			t.Errorf("pattern %q: %v", e.pattern, err)
		}
		for _, l := range e.efforts {
			if !slices.Contains(Levels, l) {
				t.Errorf("pattern %q: effort %q is not a level", e.pattern, l)
			}
		}
		switch e.thinking {
		case "", anthropic.ThinkingBudget, anthropic.ThinkingBoth, anthropic.ThinkingAdaptive, anthropic.ThinkingAdaptiveOn, anthropic.ThinkingBetweenTools, anthropic.ThinkingAlways, gemini.ThinkingLevel:
		default:
			t.Errorf("pattern %q: thinking %q", e.pattern, e.thinking)
		}
	}
	// Each built-in provider's default model is one the catalog knows.
	for provider, model := range defaultModels {
		if e := entryFor(provider, model); e.pattern == "" || e.efforts == nil || e.window == 0 {
			t.Errorf("default %s:%s: catalog entry %+v", provider, model, e)
		}
	}
}

func TestModelFacts_efforts(t *testing.T) {
	tests := []struct {
		spec, efforts, thinking string
		noForced                bool
	}{
		{"anthropic:claude-opus-5-5", "low medium high xhigh max", anthropic.ThinkingAlways, true},
		{"anthropic:claude-fable-5-1", "low medium high xhigh max", anthropic.ThinkingAlways, true},
		{"anthropic:claude-sonnet-5-5", "off low medium high xhigh max", anthropic.ThinkingBetweenTools, true},
		{"anthropic:claude-sonnet-5", "off low medium high xhigh max", anthropic.ThinkingAdaptiveOn, false},
		{"anthropic:claude-opus-4-7", "off low medium high xhigh max", anthropic.ThinkingAdaptive, false},
		{"openrouter:anthropic/claude-opus-4.8", "off low medium high xhigh max", anthropic.ThinkingAdaptive, false},
		{"anthropic:claude-opus-4-6", "off low medium high max", anthropic.ThinkingBoth, false},
		{"anthropic:claude-sonnet-4-5-20250929", "off low medium high", anthropic.ThinkingBudget, false},
		{"anthropic:claude-haiku-4-5", "off low medium high", anthropic.ThinkingBudget, false},
		{"openrouter:anthropic/claude-3.7-sonnet", "off low medium high", anthropic.ThinkingBudget, false},
		{"anthropic:claude-3-5-haiku-latest", "", "", false},
		{"anthropic:claude-opus-6", "", anthropic.ThinkingAdaptive, false},
		{"gemini:gemini-4-hydrogen", "low medium high xhigh", gemini.ThinkingLevel, false},
		{"gemini:gemini-4-argon", "low medium high", gemini.ThinkingLevel, false},
		{"gemini:gemini-3-pro-preview", "low high", gemini.ThinkingLevel, false},
		{"gemini:gemini-3-flash-preview", "minimal low medium high", gemini.ThinkingLevel, false},
		{"gemini:gemini-3.8-flash", "low medium high", gemini.ThinkingLevel, false},
		{"gemini:gemini-2.5-pro", "low medium high", gemini.ThinkingBudget, false},
		{"gemini:gemini-2.5-flash-lite", "off low medium high", gemini.ThinkingBudget, false},
		{"gemini:gemini-5-ultra", "", gemini.ThinkingLevel, false},
		{"openai:gpt-5.5", "off low medium high xhigh", "", false},
		{"openai:gpt-5.4-mini", "off low medium high xhigh", "", false},
		{"openai:gpt-5-mini", "minimal low medium high", "", false},
		{"openai:o3", "low medium high", "", false},
		{"openai:gpt-4.1", "", "", false},
		{"ollama:gpt-oss:20b", "low medium high", "", false},
		{"ollama:qwen3:8b", "off low medium high", "", false},
		{"local:my-finetune", "", "", false},
	}
	for _, tt := range tests {
		f := Fact(tt.spec)
		if got := strings.Join(f.Efforts, " "); got != tt.efforts {
			t.Errorf("%s: efforts %q, want %q", tt.spec, got, tt.efforts)
		}
		provider, model, _ := strings.Cut(tt.spec, ":")
		e := entryFor(provider, model)
		if e.thinking != tt.thinking || e.noForcedTool != tt.noForced {
			t.Errorf("%s: thinking %q, no forced tool %v; want %q, %v", tt.spec, e.thinking, e.noForcedTool, tt.thinking, tt.noForced)
		}
	}
	// What start-up checks a level against: the catalog's, off alone for
	// a model that does not reason, the basic four for one not known.
	for spec, want := range map[string]string{
		"openai:gpt-4.1":        "off",
		"local:my-finetune":     "off low medium high",
		"gemini:gemini-5-ultra": "off low medium high",
		"openai:gpt-5.5":        "off low medium high xhigh",
	} {
		if got := strings.Join(EffortsTaken(spec), " "); got != want {
			t.Errorf("EffortsTaken(%s) = %q, want %q", spec, got, want)
		}
	}
}

func TestModelFacts_current(t *testing.T) {
	for spec, want := range map[string]int{
		"anthropic:claude-opus-5-5":                1_000_000,
		"anthropic:claude-sonnet-5-5":              1_000_000,
		"anthropic:claude-haiku-4-5":               200_000,
		"gemini:gemini-4-hydrogen":                 1_048_576,
		"gemini:gemini-2.5-flash":                  1_048_576,
		"openai:gpt-5.5":                           1_050_000,
		"openai:gpt-5.4-nano":                      400_000,
		"openrouter:google/gemini-3.1-pro-preview": 1_048_576,
	} {
		if got := Fact(spec).ContextWindow; got != want {
			t.Errorf("Fact(%q).ContextWindow = %d, want %d", spec, got, want)
		}
	}
	for spec, lacks := range map[string]bool{
		"gemini:gemma-3-27b-it":         true,
		"ollama:gemma-3-27b-it":         false,
		"gemini:gemini-2.5-flash-image": true,
		"gemini:gemini-2.5-flash":       false,
	} {
		if got := Fact(spec).NoTools != ""; got != lacks {
			t.Errorf("%s: lacks tools %v, want %v", spec, got, lacks)
		}
	}
}

// A text-only model of the catalog gets stand-ins for images, unless the
// config says it sees.
func TestSees_catalog(t *testing.T) {
	yes := true
	p := &Provider{}
	if p.Sees("ollama", "gpt-oss:20b") || !p.Sees("anthropic", "claude-sonnet-5-5") || !p.Sees("ollama", "qwen3-vl:8b") {
		t.Error("the catalog's vision facts are not read")
	}
	p.Models = map[string]Model{"gpt-oss:20b": {Vision: &yes}}
	if !p.Sees("ollama", "gpt-oss:20b") {
		t.Error("the config's vision = true does not win")
	}
}

// The level a fallback model is sent is the nearest it takes.
func TestNearestEffort(t *testing.T) {
	for _, tt := range []struct {
		effort string
		takes  []string
		want   string
	}{
		{"xhigh", effortsBudget, "high"},
		{"max", []string{"low", "medium", "high", "xhigh"}, "xhigh"},
		{"minimal", effortsBudget, "off"},
		{"minimal", effortsLowHigh, "low"},
		{"off", effortsLowMax, "low"},
		{"high", effortsLowHigh, "high"},
		{"", effortsLowHigh, ""},
	} {
		if got := llm.NearestEffort(tt.effort, tt.takes); got != tt.want {
			t.Errorf("llm.NearestEffort(%q, %v) = %q, want %q", tt.effort, tt.takes, got, tt.want)
		}
	}
}
