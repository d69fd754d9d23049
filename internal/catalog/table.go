package catalog

import (
	"path"
	"strings"

	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/provider/anthropic"
	"github.com/coda-acp/coda/engine/provider/gemini"
)

// The table: what coda knows of common models before calling them, each
// fact with its source. Catalog (catalog.go) lays the config over it.

// defaultModels are the model each built-in provider defaults to: its
// vendor's current general model. Anthropic: "the best combination of
// speed and intelligence" (https://platform.claude.com/docs/en/models/sonnet-5-5/overview);
// OpenAI: "start with gpt-5.5 for most reasoning workloads"
// (https://developers.openai.com/api/docs/guides/reasoning); Google:
// Gemini 4 Hydrogen, the everyday model that succeeds 3.8 Flash
// (https://docs.cloud.google.com/gemini-enterprise-agent-platform/models/start/get-started-with-gemini-4).
var defaultModels = map[string]string{
	"anthropic":  "claude-sonnet-5-5",
	"openai":     "gpt-5.5",
	"gemini":     "gemini-4-hydrogen",
	"openrouter": "anthropic/claude-sonnet-5.5",
}

// modelCatalog is what coda knows of common models before calling them.
// An entry matches a model when its provider does ("" for any) and its
// pattern (path.Match) matches the model's base name: lowercased, without
// an "org/" prefix or a ":tag" (baseName). The first match wins, so
// the most specific come first. A provider's context_windows overrides
// the sizes, its tools and vision settings the catalog's (Catalog.Facts).
//
// Each entry says, where it is known: the context window; why the model
// cannot call tools; that it cannot see images; the reasoning effort
// levels it takes (llm.ModelFact.Efforts, in order: off first where it
// can stop; noEffort for a model that does not reason, nil when unknown);
// how it takes them (thinking: anthropic.Thinking*, gemini.Thinking*);
// and that it refuses a forced tool (noForcedTool). The source of each is
// the URL in the comment above it, as of late 2026.
//
// The tools facts are deliberately few: a model missing from them is
// assumed able to call tools, since a wrong entry would refuse a working
// blueprint. Gemma elsewhere than Ollama and the Gemini API may be served
// with a tool template, hence those entries name their provider.
var modelCatalog = []entry{
	// Not chat models.
	{pattern: "*embed*", noTools: "an embedding model: it does not chat"},
	// https://platform.openai.com/docs/models (o1-mini, o1-preview,
	// chatgpt-4o-latest: function calling not supported; completions-only
	// models).
	{pattern: "o1-mini*", window: 128_000, noTools: "OpenAI's o1-mini has no function calling"},
	{pattern: "o1-preview*", window: 200_000, noTools: "OpenAI's o1-preview has no function calling"},
	{pattern: "chatgpt-4o-latest", noTools: "OpenAI's chatgpt-4o-latest has no function calling"},
	{pattern: "gpt-3.5-turbo-instruct*", noTools: "a completions-only model"},
	{pattern: "text-davinci-*", noTools: "a completions-only model"},
	{pattern: "davinci-0*", noTools: "a completions-only model"},
	{pattern: "babbage-0*", noTools: "a completions-only model"},
	// The Ollama library: a model without the "tools" capability is refused
	// with "does not support tools" (ollama/ollama#5793, #9680).
	{provider: "ollama", pattern: "gemma", noTools: "Ollama's gemma has no tools capability"},
	{provider: "ollama", pattern: "gemma2", noTools: "Ollama's gemma2 has no tools capability"},
	{provider: "ollama", pattern: "gemma3", noTools: "Ollama's gemma3 has no tools capability"},
	{provider: "ollama", pattern: "llama2", noTools: "Ollama's llama2 has no tools capability", noVision: true},
	{provider: "ollama", pattern: "llama3", noTools: "Ollama's llama3 has no tools capability (llama3.1 and later have)", noVision: true},
	{provider: "ollama", pattern: "codellama", noTools: "Ollama's codellama has no tools capability", noVision: true},
	{provider: "ollama", pattern: "phi3", noTools: "Ollama's phi3 has no tools capability", noVision: true},
	{provider: "ollama", pattern: "llava", noTools: "Ollama's llava has no tools capability"},
	{provider: "ollama", pattern: "tinyllama", noTools: "Ollama's tinyllama has no tools capability", noVision: true},
	{provider: "ollama", pattern: "deepseek-coder", noTools: "Ollama's deepseek-coder has no tools capability", noVision: true},

	// OpenAI. https://developers.openai.com/api/docs/models and
	// https://developers.openai.com/api/docs/guides/reasoning: GPT-5.4 and
	// later take none..xhigh ("minimal" is refused: "Supported values are:
	// 'none', 'low', 'medium', 'high', and 'xhigh'"), 1,050,000 tokens;
	// the minis and nanos 400,000.
	{pattern: "gpt-5.[4-9]-mini*", window: 400_000, efforts: effortsNoneXHigh},
	{pattern: "gpt-5.[4-9]-nano*", window: 400_000, efforts: effortsNoneXHigh},
	{pattern: "gpt-5.[4-9]-pro*", window: 1_050_000},
	{pattern: "gpt-5.[4-9]*", window: 1_050_000, efforts: effortsNoneXHigh},
	// https://developers.openai.com/api/docs/models/gpt-5.3-codex (a
	// reasoning-only model: no none), gpt-5.2: none..xhigh,
	// gpt-5.1-codex-max: low..xhigh, gpt-5.1: none..high.
	{pattern: "gpt-5.[23]-codex*", window: 400_000, efforts: []string{effLow, effMedium, effHigh, effXHigh}},
	{pattern: "gpt-5.[23]*", window: 400_000, efforts: effortsNoneXHigh},
	{pattern: "gpt-5.1-codex-max*", window: 400_000, efforts: []string{effLow, effMedium, effHigh, effXHigh}},
	{pattern: "gpt-5.1*", window: 400_000, efforts: []string{effOff, effLow, effMedium, effHigh}},
	// https://platform.openai.com/docs/models/gpt-5: minimal..high;
	// gpt-5-pro high only; gpt-5-chat does not reason.
	{pattern: "gpt-5-pro*", window: 400_000, efforts: []string{effHigh}},
	{pattern: "gpt-5-chat*", window: 128_000, efforts: noEffort},
	{pattern: "gpt-5*", window: 400_000, efforts: []string{effMinimal, effLow, effMedium, effHigh}},
	// https://platform.openai.com/docs/models (o-series: low, medium,
	// high; 200,000 tokens); GPT-4.1 and GPT-4o do not reason.
	{pattern: "o1*", window: 200_000, efforts: effortsLowHigh},
	{pattern: "o3*", window: 200_000, efforts: effortsLowHigh},
	{pattern: "o4-mini*", window: 200_000, efforts: effortsLowHigh},
	{pattern: "gpt-4.1*", window: 1_047_576, efforts: noEffort},
	{pattern: "gpt-4o*", window: 128_000, efforts: noEffort},
	{pattern: "gpt-4-turbo*", window: 128_000, efforts: noEffort},
	// https://openai.com/index/introducing-gpt-oss/ and
	// https://ollama.com/library/gpt-oss: reasoning effort low, medium,
	// high, which cannot be turned off (Ollama's think takes the levels:
	// ollama/ollama-js "add support for thinking levels"); text only.
	{pattern: "gpt-oss*", window: 131_072, efforts: effortsLowHigh, noVision: true},

	// Anthropic. https://platform.claude.com/docs/en/models/overview and
	// each model's page (…/models/opus-5-5/overview, …/sonnet-5-5,
	// …/haiku-5-5, …/opus-5, …/sonnet-5): Fable 5.1 and Opus 5.5 think
	// adaptively, always on; Sonnet 5, Opus 5 and the other 5.5 models
	// adaptively, on by default; 1M tokens. Forced tool use returns an
	// error on the 5.5 models and Fable 5.1
	// (…/models/opus-5-5/whats-new-opus-5-5); Fable 5 and Mythos 5 cannot
	// be forced either (browser-use/browser-use#5009). Effort low..max,
	// with xhigh, on Opus 4.7 and later and Sonnet 5
	// (https://platform.claude.com/docs/en/build-with-claude/effort).
	{pattern: "claude-fable-*", window: 1_000_000, efforts: effortsLowMax, thinking: anthropic.ThinkingAlways, noForcedTool: true},
	{pattern: "claude-mythos-*", efforts: effortsLowMax, thinking: anthropic.ThinkingAlways, noForcedTool: true},
	{pattern: `claude-opus-5[.\-]5*`, window: 1_000_000, efforts: effortsLowMax, thinking: anthropic.ThinkingAlways, noForcedTool: true},
	{pattern: `claude-sonnet-5[.\-]5*`, window: 1_000_000, efforts: effortsOffMax, thinking: anthropic.ThinkingBetweenTools, noForcedTool: true},
	{pattern: `claude-haiku-5[.\-]5*`, window: 1_000_000, efforts: effortsOffMax, thinking: anthropic.ThinkingAdaptiveOn, noForcedTool: true},
	{pattern: "claude-opus-5*", window: 1_000_000, efforts: effortsOffMax, thinking: anthropic.ThinkingAdaptiveOn},
	{pattern: "claude-sonnet-5*", window: 1_000_000, efforts: effortsOffMax, thinking: anthropic.ThinkingAdaptiveOn},
	// https://docs.aws.amazon.com/bedrock/latest/userguide/claude-messages-adaptive-thinking.html:
	// Opus 4.7 takes adaptive thinking only (budget_tokens is a 400); Opus
	// and Sonnet 4.6 adaptive, budget deprecated, effort up to max (no
	// xhigh); Opus 4.6 is the first Opus with 1M tokens
	// (https://vercel.com/ai-gateway/models/claude-opus-4.6); Opus 4.8
	// likewise adaptive only (simstudioai/sim#4771).
	{pattern: `claude-opus-4[.\-][78]*`, window: 1_000_000, efforts: effortsOffMax, thinking: anthropic.ThinkingAdaptive},
	{pattern: `claude-opus-4[.\-]6*`, window: 1_000_000, efforts: []string{effOff, effLow, effMedium, effHigh, effMax}, thinking: anthropic.ThinkingBoth},
	{pattern: `claude-sonnet-4[.\-]6*`, window: 200_000, efforts: []string{effOff, effLow, effMedium, effHigh, effMax}, thinking: anthropic.ThinkingBoth},
	// The same page: Sonnet 4.5, Opus 4.5 and earlier take only
	// budget_tokens; Haiku 4.5 is "Extended" thinking, 200K
	// (…/docs/models/overview). Claude 3.7 Sonnet was the first with
	// extended thinking; Claude 3.5 does not reason.
	{pattern: `claude-*-4[.\-]5*`, window: 200_000, efforts: effortsBudget, thinking: anthropic.ThinkingBudget},
	{pattern: "claude-opus-4*", window: 200_000, efforts: effortsBudget, thinking: anthropic.ThinkingBudget},
	{pattern: "claude-sonnet-4*", window: 200_000, efforts: effortsBudget, thinking: anthropic.ThinkingBudget},
	{pattern: `claude-3[.\-]7-sonnet*`, window: 200_000, efforts: effortsBudget, thinking: anthropic.ThinkingBudget},
	{pattern: "claude-3*", window: 200_000, efforts: noEffort},
	// A Claude newer than this table thinks adaptively, as every one since
	// 4.6 does.
	{pattern: "claude-*", window: 200_000, thinking: anthropic.ThinkingAdaptive},

	// Google. Gemini 4 (Nov 2026,
	// https://docs.cloud.google.com/gemini-enterprise-agent-platform/models/start/get-started-with-gemini-4):
	// Hydrogen and Neon take low, medium, high and xhigh, Carbon and Argon
	// up to high, "minimal" refused (https://cursor.com/docs/models/gemini-4-hydrogen,
	// coder/xum v0.32.5); 1,048,576 tokens.
	{pattern: "gemini-4-hydrogen*", window: 1_048_576, efforts: []string{effLow, effMedium, effHigh, effXHigh}, thinking: gemini.ThinkingLevel},
	{pattern: "gemini-4-neon*", window: 1_048_576, efforts: []string{effLow, effMedium, effHigh, effXHigh}, thinking: gemini.ThinkingLevel},
	{pattern: "gemini-4-carbon*", window: 1_048_576, efforts: effortsLowHigh, thinking: gemini.ThinkingLevel},
	{pattern: "gemini-4-argon*", window: 1_048_576, efforts: effortsLowHigh, thinking: gemini.ThinkingLevel},
	// Gemini 3 (https://ai.google.dev/gemini-api/docs/gemini-3,
	// https://ai.google.dev/gemini-api/docs/thinking): thinkingLevel; 3 Pro
	// low and high, 3 Flash minimal..high, 3.1 Pro low..high (no minimal),
	// 3.7 and 3.8 Flash low..high ("minimal" is an error:
	// https://ai.google.dev/gemini-api/docs/models/gemini-3.8-flash); none
	// can stop thinking.
	{pattern: "gemini-*-image*", noTools: "an image generation model: it has no function calling"},
	{pattern: "gemini-*-tts*", noTools: "a speech model: it has no function calling"},
	{pattern: "gemini-3.[78]-flash*", window: 1_048_576, efforts: effortsLowHigh, thinking: gemini.ThinkingLevel},
	{pattern: "gemini-3.1-pro*", window: 1_048_576, efforts: effortsLowHigh, thinking: gemini.ThinkingLevel},
	{pattern: "gemini-3-pro*", window: 1_048_576, efforts: []string{effLow, effHigh}, thinking: gemini.ThinkingLevel},
	{pattern: "gemini-3-flash*", window: 1_048_576, efforts: []string{effMinimal, effLow, effMedium, effHigh}, thinking: gemini.ThinkingLevel},
	{pattern: "gemini-3*", window: 1_048_576, thinking: gemini.ThinkingLevel},
	// Gemini 2.5 (https://ai.google.dev/gemini-api/docs/thinking#set-budget):
	// thinkingBudget; Pro 128–32768 and cannot stop, Flash 0–24576,
	// Flash-Lite 0 or 512–24576.
	{pattern: "gemini-2.5-pro*", window: 1_048_576, efforts: []string{effLow, effMedium, effHigh}, thinking: gemini.ThinkingBudget},
	{pattern: "gemini-2.5-flash*", window: 1_048_576, efforts: effortsBudget, thinking: gemini.ThinkingBudget},
	{pattern: "gemini-2.0*", window: 1_048_576, efforts: noEffort},
	// A Gemini newer than this table takes a thinkingLevel, as every one
	// since 3 does. Gemma on the Gemini API has no function calling
	// (https://ai.google.dev/gemma/docs/core/gemma_on_gemini_api).
	{pattern: "gemini-*", window: 1_048_576, thinking: gemini.ThinkingLevel},
	{provider: "gemini", pattern: "gemma-*", noTools: "Gemma on the Gemini API has no function calling"},

	// Open models. https://api-docs.deepseek.com/quick_start/pricing:
	// deepseek-chat and deepseek-reasoner, 128K, the mode fixed by the
	// name. https://ollama.com/library (each model's page): think on or
	// off for qwen3 and deepseek-r1; llama3.1–3.3 128K, text only, no
	// reasoning; qwen2.5 32K; mistral-large 128K.
	{pattern: "deepseek-chat*", window: 128_000, efforts: noEffort, noVision: true},
	{pattern: "deepseek-reasoner*", window: 128_000, noVision: true},
	{pattern: "deepseek-r1*", efforts: effortsBudget, noVision: true},
	{pattern: "qwen3-coder*", efforts: noEffort, noVision: true},
	{pattern: "qwen3-vl*", efforts: effortsBudget},
	{pattern: "qwen3*", efforts: effortsBudget, noVision: true},
	{pattern: "qwen2.5-vl*", efforts: noEffort},
	{pattern: "qwen2.5*", window: 32_768, efforts: noEffort, noVision: true},
	{pattern: "llama3.1*", window: 131_072, efforts: noEffort, noVision: true},
	{pattern: "llama3.2-vision*", window: 131_072, efforts: noEffort},
	{pattern: "llama3.2*", window: 131_072, efforts: noEffort, noVision: true},
	{pattern: "llama3.3*", window: 131_072, efforts: noEffort, noVision: true},
	{pattern: "llama-3.1*", window: 131_072, efforts: noEffort, noVision: true},
	{pattern: "llama-3.2*", window: 131_072, efforts: noEffort, noVision: true},
	{pattern: "llama-3.3*", window: 131_072, efforts: noEffort, noVision: true},
	{pattern: "llama4*", efforts: noEffort},
	{pattern: "llama-4*", efforts: noEffort},
	{pattern: "mistral-large*", window: 131_072, efforts: noEffort},
	{pattern: "devstral*", window: 131_072, efforts: noEffort, noVision: true},
}

// An entry is one line of the table. A new fact of a model (its price per
// million tokens, say) is a field here, set in the entries it is known
// for with its source and date in the comment above them, and answered by
// a method of Catalog that looks the entry up through entryFor, as Facts
// and Efforts do.
type entry struct {
	provider, pattern string
	window            int      // tokens; 0 when unknown
	noTools           string   // why the model cannot call tools; "" when it can
	noVision          bool     // it cannot see images
	efforts           []string // the effort levels it takes; noEffort: none; nil: unknown
	thinking          string   // how it takes them (anthropic.Thinking*, gemini.Thinking*)
	noForcedTool      bool     // it refuses a forced tool choice
}

// Effort levels, as the catalog lists them.
const (
	effOff     = llm.EffortOff
	effMinimal = llm.EffortMinimal
	effLow     = llm.EffortLow
	effMedium  = llm.EffortMedium
	effHigh    = llm.EffortHigh
	effXHigh   = llm.EffortXHigh
	effMax     = llm.EffortMax
)

var (
	// noEffort marks a model that does not reason: it takes no effort.
	noEffort = []string{}
	// basicEfforts are what a model the catalog does not know takes.
	basicEfforts     = llm.BasicEfforts
	effortsBudget    = basicEfforts
	effortsLowHigh   = []string{effLow, effMedium, effHigh}
	effortsNoneXHigh = []string{effOff, effLow, effMedium, effHigh, effXHigh}
	effortsOffMax    = []string{effOff, effLow, effMedium, effHigh, effXHigh, effMax}
	effortsLowMax    = []string{effLow, effMedium, effHigh, effXHigh, effMax}
)

// Fact is the table as the engine takes it: what is known of the
// model a spec ("PROVIDER:MODEL") names. Script models are the script's:
// nothing is known of them.
func Fact(spec string) llm.ModelFact {
	provider, model, ok := strings.Cut(spec, ":")
	if !ok || provider == "script" {
		return llm.ModelFact{}
	}
	return fact(provider, model)
}

// fact is what the first catalog entry for model served by
// provider says, as the engine takes it.
func fact(provider, model string) llm.ModelFact {
	e := entryFor(provider, model)
	f := llm.ModelFact{ContextWindow: e.window, NoTools: e.noTools}
	if len(e.efforts) > 0 {
		f.Efforts = e.efforts
	}
	f.NoEffort = e.efforts != nil && len(e.efforts) == 0
	return f
}

// entryFor is the first catalog entry for model served by
// provider; the zero entry when none matches.
func entryFor(provider, model string) entry {
	base := baseName(model)
	for _, m := range modelCatalog {
		if m.provider != "" && m.provider != provider {
			continue
		}
		if ok, _ := path.Match(m.pattern, base); ok {
			return m
		}
	}
	return entry{}
}

// EffortsTaken are the effort levels the model spec names takes: the
// catalog's, "off" alone for a model that does not reason, and the basic
// four for a model the catalog does not know.
func EffortsTaken(spec string) []string {
	provider, model, ok := strings.Cut(spec, ":")
	if !ok || provider == "script" {
		return basicEfforts
	}
	e := entryFor(provider, model)
	switch {
	case e.efforts == nil:
		return basicEfforts
	case len(e.efforts) == 0:
		return []string{effOff}
	}
	return e.efforts
}

// baseName is the name the catalog matches: lowercased, without a
// vendor prefix ("anthropic/claude-…" on OpenRouter) or an Ollama tag
// (":8b").
func baseName(model string) string {
	base := strings.ToLower(model)
	if i := strings.LastIndexByte(base, '/'); i >= 0 {
		base = base[i+1:]
	}
	if i := strings.IndexByte(base, ':'); i >= 0 {
		base = base[:i]
	}
	return base
}
