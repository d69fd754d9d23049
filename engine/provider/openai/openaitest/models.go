package openaitest

import (
	"strconv"
	"strings"
)

// The model families the rules depend on.

// baseName is a model id without a vendor prefix, lowercased.
func baseName(model string) string {
	model = strings.ToLower(model)
	if i := strings.LastIndexByte(model, '/'); i >= 0 {
		model = model[i+1:]
	}
	return model
}

// noToolsWithEffort: OpenAI's GPT-5.4 and later on chat completions.
func noToolsWithEffort(model string) bool {
	rest, ok := strings.CutPrefix(baseName(model), "gpt-")
	if !ok {
		return false
	}
	num := rest
	if i := strings.IndexAny(rest, "-_ "); i >= 0 {
		num = rest[:i]
	}
	maj, mnr, _ := strings.Cut(num, ".")
	a, err := strconv.Atoi(maj)
	b, _ := strconv.Atoi(mnr)
	return err == nil && (a > 5 || a == 5 && b >= 4)
}

// doesNotReason: OpenAI's models that refuse reasoning_effort on chat
// completions, as every model that does not reason does; a model of
// another server that the fake does not know takes it (vLLM, Ollama's
// /v1 and others pass it to the model's template or ignore it).
func doesNotReason(model string) bool {
	b := baseName(model)
	return strings.HasPrefix(b, "gpt-3.5") || strings.HasPrefix(b, "gpt-4") || strings.HasPrefix(b, "chatgpt-") ||
		(strings.HasPrefix(b, "gpt-5") || strings.HasPrefix(b, "gpt-6")) && strings.Contains(b, "-chat")
}

// reasons: the models that take reasoning parameters.
func reasons(model string) bool {
	b := baseName(model)
	return (strings.HasPrefix(b, "gpt-5") || strings.HasPrefix(b, "gpt-6") || strings.HasPrefix(b, "o3") || strings.HasPrefix(b, "o4")) && !strings.Contains(b, "-chat")
}

// samplingRefused is the sampling parameter of b a reasoning model refuses
// while it reasons, or "": temperature and top_p are taken only with
// reasoning effort none ("Unsupported parameter: 'temperature' is not
// supported with this model.", as o-series and GPT-5 models answer;
// developers.openai.com/api/docs/guides/reasoning, GPT-5.2's "temperature,
// top_p and logprobs are supported only with reasoning effort none").
func samplingRefused(model, effort string, b map[string]any) string {
	if !reasons(model) || effort == "none" {
		return ""
	}
	for _, p := range []string{"temperature", "top_p"} {
		if _, has := b[p]; has {
			return p
		}
	}
	return ""
}
