package main

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
//     provider/model ("bedrock/…", "anthropic/claude-sonnet-5"); any other
//     "vendor/model" is OpenRouter's form, and goes to openrouter, unless a
//     provider of the config names that very id in its tables.
//
// Only the providers' own names decide: not whether a key is set (that is
// the environment's, and preflight says what to set).

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

// resolveSpec is the PROVIDER:MODEL spec names, or why it names none (an
// error wrapping llm.ErrModelUnavailable, so that a stage tries its next
// model). A spec that names an unknown provider is returned as it is: the
// caller's resolve says what is wrong with it.
func (c *config) resolveSpec(spec string) (string, error) {
	if name, _, ok := strings.Cut(spec, ":"); ok && (name == "script" || c.providers[name] != nil) {
		return spec, nil
	}
	claims := c.claims(spec)
	if first, rest, ok := strings.Cut(spec, "/"); ok && !strings.Contains(first, ":") && rest != "" {
		switch {
		case len(claims) > 0:
		case c.providers[first] != nil:
			return first + ":" + rest, nil
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
			return spec, nil // an unknown PROVIDER: resolve names the known ones
		}
		return "", configUnavailable{fmt.Sprintf("model %q: no provider is known to serve it by that name: write PROVIDER:MODEL, e.g. %s, or name it in a [providers.NAME.models.%q] table of the config", spec, currentModels(), spec)}
	}
	var each []string
	for _, p := range claims {
		each = append(each, p+":"+spec)
	}
	who := "both " + andList(claims)
	if len(claims) > 2 {
		who = andList(claims) + " all"
	}
	return "", configUnavailable{fmt.Sprintf("model %q: %s serve it: name one, as %s", spec, who, orList(each))}
}

// canonical is the PROVIDER:MODEL spec names, or spec itself when it names
// none: for what is looked up about a model (the catalog, efforts), where
// the error is someone else's to report.
func (c *config) canonical(spec string) string {
	if r, err := c.resolveSpec(spec); err == nil {
		return r
	}
	return spec
}

// claims are the providers whose config names model in its models or
// context_windows tables, sorted.
func (c *config) claims(model string) []string {
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

// currentModels names each built-in provider's default model, the
// vendor's current one (defaultModels), as PROVIDER:MODEL: what a hint
// offers in place of a name coda cannot place.
func currentModels() string {
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
