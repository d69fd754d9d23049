package prices

import "strings"

// The prices coda knows, each read from its vendor's own page on the day
// Date names. A model is here only when every figure of its price was on
// a vendor page read; a model left out reports its tokens and says its
// cost is unknown (a config may price it: [models."PROVIDER:MODEL"]).
//
// Left out for now, and why:
//   - OpenAI's and Google's models, and DeepSeek's: their pricing pages
//     (developers.openai.com/api/docs/pricing,
//     ai.google.dev/gemini-api/docs/pricing) could not be read from here,
//     only third parties quoting them; DeepSeek's page as read was a year
//     old. GPT-5.5 and 5.4 are also billed higher for the whole request
//     past 272K prompt tokens, which a Price does not model.
//   - Claude Sonnet 5.5: its page as read gives a $0.20 cache read, and
//     two price trackers report it cut to $0.10 on 2026-10-07; neither
//     figure could be confirmed as today's.
//   - Claude Haiku 5.5: billed in two bands by prompt size (over 100K
//     tokens costs more), whose upper band no page read gave.
//   - Claude Fable 5.2 and Mythos 5.2: on no page read.
//
// CachedWrite is the 5-minute cache write: the lifetime coda's Anthropic
// breakpoints ask for (cache_control without a ttl). Sonnet 4 and 4.5
// cost more past 200K prompt tokens, but only with the 1M-token beta,
// which coda does not ask for (their window is 200K in the catalog).
var table = []entry{
	// https://platform.claude.com/docs/en/about-claude/pricing ("Model
	// pricing": base input, 5m cache writes, cache hits, output).
	{"anthropic", "claude-fable-5-1", Price{Input: 10, Output: 50, CachedRead: 0.25, CachedWrite: 12.50, Source: anthropicPricing, Date: read}},
	{"anthropic", "claude-mythos-5-1", Price{Input: 10, Output: 50, CachedRead: 0.25, CachedWrite: 12.50, Source: anthropicPricing, Date: read}},
	{"anthropic", "claude-fable-5", Price{Input: 10, Output: 50, CachedRead: 1, CachedWrite: 12.50, Source: anthropicPricing, Date: read}},
	{"anthropic", "claude-mythos-5", Price{Input: 10, Output: 50, CachedRead: 1, CachedWrite: 12.50, Source: anthropicPricing, Date: read}},
	{"anthropic", "claude-opus-5", Price{Input: 5, Output: 25, CachedRead: 0.50, CachedWrite: 6.25, Source: anthropicPricing, Date: read}},
	{"anthropic", "claude-opus-4-8", Price{Input: 5, Output: 25, CachedRead: 0.50, CachedWrite: 6.25, Source: anthropicPricing, Date: read}},
	{"anthropic", "claude-opus-4-7", Price{Input: 5, Output: 25, CachedRead: 0.50, CachedWrite: 6.25, Source: anthropicPricing, Date: read}},
	{"anthropic", "claude-opus-4-6", Price{Input: 5, Output: 25, CachedRead: 0.50, CachedWrite: 6.25, Source: anthropicPricing, Date: read}},
	{"anthropic", "claude-opus-4-5", Price{Input: 5, Output: 25, CachedRead: 0.50, CachedWrite: 6.25, Source: anthropicPricing, Date: read}},
	{"anthropic", "claude-opus-4-1", Price{Input: 15, Output: 75, CachedRead: 1.50, CachedWrite: 18.75, Source: anthropicPricing, Date: read}},
	{"anthropic", "claude-opus-4-0", Price{Input: 15, Output: 75, CachedRead: 1.50, CachedWrite: 18.75, Source: anthropicPricing, Date: read}},
	{"anthropic", "claude-opus-4", Price{Input: 15, Output: 75, CachedRead: 1.50, CachedWrite: 18.75, Source: anthropicPricing, Date: read}},
	// The models' own pages: Opus 5.5 (a cache read at 0.05× input, not
	// the usual 0.1×) and Sonnet 5.
	{"anthropic", "claude-opus-5-5", Price{Input: 4, Output: 20, CachedRead: 0.20, CachedWrite: 5, Source: "https://platform.claude.com/docs/zh-CN/models/opus-5-5/overview", Date: read}},
	{"anthropic", "claude-sonnet-5", Price{Input: 2, Output: 10, CachedRead: 0.20, CachedWrite: 2.50, Source: "https://platform.claude.com/docs/zh-CN/models/sonnet-5/overview", Date: read}},
	// The same pricing page, under its older path, for the Sonnet 4 and
	// Haiku models.
	{"anthropic", "claude-sonnet-4-6", Price{Input: 3, Output: 15, CachedRead: 0.30, CachedWrite: 3.75, Source: anthropicPricingOld, Date: read}},
	{"anthropic", "claude-sonnet-4-5", Price{Input: 3, Output: 15, CachedRead: 0.30, CachedWrite: 3.75, Source: anthropicPricingOld, Date: read}},
	{"anthropic", "claude-sonnet-4-0", Price{Input: 3, Output: 15, CachedRead: 0.30, CachedWrite: 3.75, Source: anthropicPricingOld, Date: read}},
	{"anthropic", "claude-sonnet-4", Price{Input: 3, Output: 15, CachedRead: 0.30, CachedWrite: 3.75, Source: anthropicPricingOld, Date: read}},
	{"anthropic", "claude-3-7-sonnet", Price{Input: 3, Output: 15, CachedRead: 0.30, CachedWrite: 3.75, Source: anthropicPricingOld, Date: read}},
	{"anthropic", "claude-haiku-4-5", Price{Input: 1, Output: 5, CachedRead: 0.10, CachedWrite: 1.25, Source: anthropicPricingOld, Date: read}},
	{"anthropic", "claude-3-5-haiku", Price{Input: 0.80, Output: 4, CachedRead: 0.08, CachedWrite: 1, Source: anthropicPricingOld, Date: read}},
	{"anthropic", "claude-3-haiku", Price{Input: 0.25, Output: 1.25, CachedRead: 0.03, CachedWrite: 0.30, Source: anthropicPricingOld, Date: read}},
}

const (
	anthropicPricing    = "https://platform.claude.com/docs/en/about-claude/pricing"
	anthropicPricingOld = "https://platform.claude.com/docs/en/docs/about-claude/pricing"
	// read is the day the pages above were read.
	read = "2026-12-06"
)

// An entry prices one model of one provider. It matches the model's id
// and the id's dated snapshots ("claude-opus-4-1-20250805"), but not a
// later model whose id it begins ("claude-opus-4" is not
// "claude-opus-4-5").
type entry struct {
	provider, model string
	price           Price
}

// Lookup is the price of the model the provider named provider serves
// (as a spec names them: "anthropic", "claude-opus-5"); false when coda
// knows none. Only the vendor's own provider is priced: a router or a
// proxy serving the same model bills its own way.
func Lookup(provider, model string) (Price, bool) {
	model = strings.ToLower(model)
	for _, e := range table {
		if e.provider != provider {
			continue
		}
		if model == e.model || dated(model, e.model) {
			return e.price, true
		}
	}
	return Price{}, false
}

// dated reports whether model is a dated snapshot of id: id, a hyphen and
// a date (20250805).
func dated(model, id string) bool {
	rest, ok := strings.CutPrefix(model, id+"-")
	if !ok || len(rest) != 8 {
		return false
	}
	for _, c := range rest {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
