package main

import (
	"fmt"
	"path"
	"strings"

	"github.com/coda-acp/coda/engine"
)

// What coda knows of a model before calling it lives here: the catalog,
// the config over it (modelFacts), and whether it sees images (sees).

// modelCatalog is what coda knows of common models before calling them:
// context sizes, and which cannot call tools. An entry matches a model
// when its provider does ("" for any) and its pattern (path.Match) matches
// the model's base name: lowercased, without an "org/" prefix or a ":tag"
// (catalogBase). The first match wins, so the most specific come first. A
// provider's context_windows overrides the sizes (config.go).
//
// The tools list is deliberately short: a model missing from it is
// assumed able to call tools, since a wrong entry would refuse a working
// blueprint. Sources: OpenAI's model pages (o1-mini, o1-preview,
// chatgpt-4o-latest: function calling not supported; completions-only and
// embedding models), and the Ollama library, whose models without the
// "tools" capability are refused with "does not support tools"
// (ollama/ollama#5793, #9680). Gemma elsewhere than Ollama may be served
// with a tool template, hence those entries name their provider.
var modelCatalog = []struct {
	provider, pattern string
	window            int    // tokens; 0 when unknown
	noTools           string // why the model cannot call tools; "" when it can
}{
	{"", "*embed*", 0, "an embedding model: it does not chat"},
	{"", "o1-mini*", 128_000, "OpenAI's o1-mini has no function calling"},
	{"", "o1-preview*", 200_000, "OpenAI's o1-preview has no function calling"},
	{"", "chatgpt-4o-latest", 0, "OpenAI's chatgpt-4o-latest has no function calling"},
	{"", "gpt-3.5-turbo-instruct*", 0, "a completions-only model"},
	{"", "text-davinci-*", 0, "a completions-only model"},
	{"", "davinci-0*", 0, "a completions-only model"},
	{"", "babbage-0*", 0, "a completions-only model"},
	{"ollama", "gemma", 0, "Ollama's gemma has no tools capability"},
	{"ollama", "gemma2", 0, "Ollama's gemma2 has no tools capability"},
	{"ollama", "gemma3", 0, "Ollama's gemma3 has no tools capability"},
	{"ollama", "llama2", 0, "Ollama's llama2 has no tools capability"},
	{"ollama", "llama3", 0, "Ollama's llama3 has no tools capability (llama3.1 and later have)"},
	{"ollama", "codellama", 0, "Ollama's codellama has no tools capability"},
	{"ollama", "phi3", 0, "Ollama's phi3 has no tools capability"},
	{"ollama", "llava", 0, "Ollama's llava has no tools capability"},
	{"ollama", "tinyllama", 0, "Ollama's tinyllama has no tools capability"},
	{"ollama", "deepseek-coder", 0, "Ollama's deepseek-coder has no tools capability"},
	{"", "gpt-5*", 400_000, ""},
	{"", "gpt-4.1*", 1_047_576, ""},
	{"", "gpt-4o*", 128_000, ""},
	{"", "gpt-4-turbo*", 128_000, ""},
	{"", "gpt-oss*", 131_072, ""},
	{"", "o1*", 200_000, ""},
	{"", "o3*", 200_000, ""},
	{"", "o4-mini*", 200_000, ""},
	{"", "claude-*", 200_000, ""},
	{"", "gemini-2.5*", 1_048_576, ""},
	{"", "gemini-2.0*", 1_048_576, ""},
	{"", "deepseek-chat*", 128_000, ""},
	{"", "deepseek-reasoner*", 128_000, ""},
	{"", "llama3.1*", 131_072, ""},
	{"", "llama3.2*", 131_072, ""},
	{"", "llama3.3*", 131_072, ""},
	{"", "llama-3.1*", 131_072, ""},
	{"", "llama-3.2*", 131_072, ""},
	{"", "llama-3.3*", 131_072, ""},
	{"", "qwen2.5*", 32_768, ""},
	{"", "mistral-large*", 131_072, ""},
}

// modelFacts is the catalog as the engine takes it: what is known of the
// model a spec ("PROVIDER:MODEL") names. Script models are the script's:
// nothing is known of them.
func modelFacts(spec string) engine.ModelFact {
	provider, model, ok := strings.Cut(spec, ":")
	if !ok || provider == "script" {
		return engine.ModelFact{}
	}
	return catalogFact(provider, model)
}

// modelFacts is what is known of the model spec names: the catalog, with
// the config over it. A provider's context_windows gives a model's size;
// tools = false on the provider, or on the model ([providers.NAME.models.
// "MODEL"], which wins either way), says it cannot call tools, and
// tools = true says it can, whatever the catalog thinks.
func (c *config) modelFacts(spec string) engine.ModelFact {
	f := modelFacts(spec)
	name, model, ok := strings.Cut(spec, ":")
	p := c.providers[name]
	if !ok || p == nil {
		return f
	}
	if n, ok := p.ContextWindows[model]; ok {
		f.ContextWindow = n
	}
	key := "providers." + name
	tools := p.Tools
	if m, ok := p.Models[model]; ok && m.Tools != nil {
		key, tools = fmt.Sprintf("providers.%s.models.%q", name, model), m.Tools
	}
	switch {
	case tools == nil:
	case *tools:
		f.NoTools = ""
	default:
		f.NoTools = fmt.Sprintf("the config says so: [%s] tools = false", key)
	}
	return f
}

// sees reports whether model, served by p, takes images: the model's own
// vision setting, else the provider's, else yes (a model that cannot is
// marked in the config file). Unlike tools, the catalog knows nothing of
// vision.
func (p *providerConfig) sees(model string) bool {
	if m, ok := p.Models[model]; ok && m.Vision != nil {
		return *m.Vision
	}
	if p.Vision != nil {
		return *p.Vision
	}
	return true
}

// catalogFact is the first catalog entry for model served by provider.
func catalogFact(provider, model string) engine.ModelFact {
	base := catalogBase(model)
	for _, m := range modelCatalog {
		if m.provider != "" && m.provider != provider {
			continue
		}
		if ok, _ := path.Match(m.pattern, base); ok {
			return engine.ModelFact{ContextWindow: m.window, NoTools: m.noTools}
		}
	}
	return engine.ModelFact{}
}

// catalogBase is the name the catalog matches: lowercased, without a
// vendor prefix ("anthropic/claude-…" on OpenRouter) or an Ollama tag
// (":8b").
func catalogBase(model string) string {
	base := strings.ToLower(model)
	if i := strings.LastIndexByte(base, '/'); i >= 0 {
		base = base[i+1:]
	}
	if i := strings.IndexByte(base, ':'); i >= 0 {
		base = base[:i]
	}
	return base
}
