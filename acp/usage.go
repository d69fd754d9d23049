package acp

import "github.com/coda-acp/coda/store"

// What a turn used, on the wire (DESIGN §23): PromptResponse.usage, ACP's
// (unstable) Usage, on every prompt's response.

// turnUsage is PromptResponse.usage: the tokens of every model call of
// the turn, its workers', children's and repairs' included. inputTokens
// counts every prompt token, cached or not (cachedReadTokens and
// cachedWriteTokens are part of it); outputTokens every output token,
// reasoning (thoughtTokens) included; totalTokens is the two together. A
// turn that called no model (a slash command, a prompt cancelled in the
// queue) used none, and says so.
type turnUsage struct {
	TotalTokens       int `json:"totalTokens"`
	InputTokens       int `json:"inputTokens"`
	OutputTokens      int `json:"outputTokens"`
	ThoughtTokens     int `json:"thoughtTokens"`
	CachedReadTokens  int `json:"cachedReadTokens"`
	CachedWriteTokens int `json:"cachedWriteTokens"`
}

// usageOf is a turn's Usage from what its run spent.
func usageOf(s store.Spend) turnUsage {
	return turnUsage{
		TotalTokens: s.InputTokens + s.OutputTokens, InputTokens: s.InputTokens, OutputTokens: s.OutputTokens,
		ThoughtTokens: s.ReasoningTokens, CachedReadTokens: s.CacheReadTokens, CachedWriteTokens: s.CacheWriteTokens,
	}
}
