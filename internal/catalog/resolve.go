package catalog

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// Model names as Leviath writes them (DESIGN §25): a spec that does not
// name its provider is resolved here, once, to the PROVIDER:MODEL every
// other part of coda takes.
//
//   - PROVIDER:MODEL (or script:PATH) is taken as written.
//   - A bare id ("claude-sonnet-5", "gpt-5.5", "gemini-3-pro") goes to the
//     one provider that serves it: the built-in provider of the vendor
//     whose catalog names it (modelVendors), and any provider of the
//     config that names it in its models or context_windows tables. Two
//     such providers are an error naming both; none, an error naming the
//     catalog's current models.
//   - "NAME/MODEL", where NAME is a provider coda knows, is Leviath's
//     provider/model ("anthropic/claude-sonnet-5"; Leviath's google is
//     coda's gemini); where NAME is one of Leviath's providers that coda
//     does not have (xai, bedrock, meshy…), an error saying how to have it
//     (leviathProviders); any other "vendor/model" is OpenRouter's form, and
//     goes to openrouter, unless a provider of the config names that very
//     id in its tables.
//
// Only the providers' own names decide: not whether a key is set (that is
// the environment's, and Check says what to set).

// modelVendors say which built-in provider serves a bare model id: the
// vendor whose API names its models so (the catalog's sources). The first
// match wins; "" is a family no built-in provider serves by that name
// (open weights, served by whoever runs them).
var modelVendors = []struct{ pattern, provider string }{
	{"gpt-oss*", ""},
	{"claude-*", "anthropic"},
	{"gpt-*", "openai"},
	{"chatgpt-*", "openai"},
	{"o[134]", "openai"},
	{"o[134]-*", "openai"},
	{"gemini-*", "gemini"},
}

// leviathProviders are Leviath's providers that coda has no built-in
// for, and how to have one (docs/leviath.md): NAME/MODEL names them in
// Leviath's blueprints, and so does { provider = "NAME" }.
var leviathProviders = map[string]string{
	"xai":         `xai is Leviath's provider for xAI's API, which coda has no built-in for: add [providers.xai] with kind = "openai", base_url = "https://api.x.ai/v1" and api_key_env = "XAI_API_KEY" to the config (then xai/MODEL names it), or use OpenRouter's id, openrouter:x-ai/MODEL; coda drives no image or video model (docs/leviath.md)`,
	"grok":        `grok is Leviath's SuperGrok sign-in, which coda does not have: use xAI's API as [providers.xai] (docs/leviath.md)`,
	"meta":        `meta is Leviath's provider for Meta's Model API, which coda has no built-in for: add it as a [providers.meta] of kind "openai" if its API is OpenAI-compatible (docs/leviath.md)`,
	"bedrock":     `bedrock is Leviath's provider for AWS Bedrock, which coda does not have (it signs no AWS requests): name the model on a provider coda has, such as anthropic:MODEL (docs/leviath.md)`,
	"meshy":       `meshy is Leviath's 3D-model provider: coda has no media providers (docs/leviath.md)`,
	"codex":       `codex is Leviath's ChatGPT sign-in, which coda does not have: use openai:MODEL with OPENAI_API_KEY (docs/leviath.md)`,
	"claude-code": `claude-code is Leviath's Claude Code transport, which coda does not have: use anthropic:MODEL with ANTHROPIC_API_KEY (docs/leviath.md)`,
	"llama-cpp":   `llama-cpp is a Leviath provider name: add [providers.llama-cpp] with kind = "openai", server = "llama.cpp" and its base_url to the config (docs/leviath.md)`,
	"lm-studio":   `lm-studio is a Leviath provider name: add [providers.lm-studio] with kind = "openai" and its base_url to the config (docs/leviath.md)`,
}

// vendorOf is the built-in provider whose vendor names model so; "" when
// none does.
func vendorOf(model string) string {
	base := strings.ToLower(model)
	for _, v := range modelVendors {
		if ok, _ := path.Match(v.pattern, base); ok {
			return v.provider
		}
	}
	return ""
}

// Resolve is the PROVIDER:MODEL spec names, or why it names none (an
// error wrapping llm.ErrModelUnavailable, so that a stage tries its next
// model). A spec that names an unknown provider is returned as it is: the
// caller's Check says what is wrong with it.
func (c *Catalog) Resolve(spec string) (string, error) {
	if name, _, ok := strings.Cut(spec, ":"); ok && (name == "script" || c.providers[name] != nil) {
		return spec, nil
	}
	claims := c.claims(spec)
	if first, rest, ok := strings.Cut(spec, "/"); ok && !strings.Contains(first, ":") && rest != "" {
		switch {
		case len(claims) > 0:
		case c.providers[first] != nil:
			return first + ":" + rest, nil
		case first == "google" && c.providers["gemini"] != nil:
			return "gemini:" + rest, nil
		case leviathProviders[first] != "":
			return "", Unavailable{fmt.Sprintf("model %q: %s", spec, leviathProviders[first])}
		case c.providers["openrouter"] != nil:
			return "openrouter:" + spec, nil
		}
	} else if v := vendorOf(spec); v != "" && c.providers[v] != nil && !slices.Contains(claims, v) && !strings.Contains(spec, ":") {
		claims = append(claims, v)
		slices.Sort(claims)
	}
	switch len(claims) {
	case 1:
		return claims[0] + ":" + spec, nil
	case 0:
		if strings.Contains(spec, ":") {
			return spec, nil // an unknown PROVIDER: Check names the known ones
		}
		return "", Unavailable{fmt.Sprintf("model %q: no provider is known to serve it by that name: write PROVIDER:MODEL, e.g. %s, or name it in a [providers.NAME.models.%q] table of the config", spec, CurrentModels(), spec)}
	}
	var each []string
	for _, p := range claims {
		each = append(each, p+":"+spec)
	}
	who := "both " + andList(claims)
	if len(claims) > 2 {
		who = andList(claims) + " all"
	}
	return "", Unavailable{fmt.Sprintf("model %q: %s serve it: name one, as %s", spec, who, orList(each))}
}

// Canonical is the PROVIDER:MODEL spec names, or spec itself when it names
// none: for what is looked up about a model (the catalog, efforts), where
// the error is someone else's to report.
func (c *Catalog) Canonical(spec string) string {
	if r, err := c.Resolve(spec); err == nil {
		return r
	}
	return spec
}

// claims are the providers whose config names model in its models or
// context_windows tables, sorted.
func (c *Catalog) claims(model string) []string {
	var out []string
	for name, p := range c.providers {
		_, m := p.Models[model]
		_, w := p.ContextWindows[model]
		if m || w {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// CurrentModels names each built-in provider's default model, the
// vendor's current one (defaultModels), as PROVIDER:MODEL: what a hint
// offers in place of a name coda cannot place.
func CurrentModels() string {
	var out []string
	for _, p := range []string{"anthropic", "openai", "gemini", "openrouter"} {
		out = append(out, p+":"+defaultModels[p])
	}
	return strings.Join(out, ", ")
}

func andList(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

func orList(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}
