package acp

import (
	"slices"
	"strconv"
	"sync"

	"github.com/coda-acp/coda/internal/jsonrpc"
	"github.com/coda-acp/coda/internal/prices"
	statestore "github.com/coda-acp/coda/store"
)

// What a turn used and cost, on the wire (DESIGN §23): PromptResponse.usage,
// ACP's (unstable) Usage, on every prompt's response, with the turn's cost
// in its _meta.coda; usage_update's cost, the session's so far (updates.go).
// A cost is never made up: while a model called has no known price, the
// cost is "unknown" and the models are named.

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
	// Meta is _meta.coda: the turn's calls and cost; absent for a turn
	// that made none.
	Meta *codaMeta[turnCost] `json:"_meta,omitempty"`
}

// turnCost is PromptResponse.usage._meta.coda: how many model calls the
// turn made, and what they cost, or "unknown" with the models that have
// no price.
type turnCost struct {
	Calls    int      `json:"calls"`
	Cost     any      `json:"cost"` // a *prices.Cost, or "unknown"
	Unpriced []string `json:"unpriced,omitempty"`
}

// usageOf is a turn's Usage from what its run spent.
func usageOf(s statestore.Spend) turnUsage {
	u := turnUsage{
		TotalTokens: s.InputTokens + s.OutputTokens, InputTokens: s.InputTokens, OutputTokens: s.OutputTokens,
		ThoughtTokens: s.ReasoningTokens, CachedReadTokens: s.CacheReadTokens, CachedWriteTokens: s.CacheWriteTokens,
	}
	if s.Calls == 0 {
		return u
	}
	c := turnCost{Calls: s.Calls, Cost: s.Cost, Unpriced: s.Unpriced}
	if s.Cost == nil {
		c.Cost = "unknown"
	}
	u.Meta = &codaMeta[turnCost]{Coda: c}
	return u
}

// sessionSpend is what a session's finished turns cost, since it was
// created or loaded in this process: usage_update's cost is the session's
// (ACP: "cumulative session cost").
type sessionSpend struct {
	mu       sync.Mutex
	amount   float64
	unpriced []string
}

// add counts a finished turn's spend.
func (s *sessionSpend) add(turn statestore.Spend) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if turn.Cost != nil {
		s.amount += turn.Cost.Amount
	}
	for _, m := range turn.Unpriced {
		if !slices.Contains(s.unpriced, m) {
			s.unpriced = append(s.unpriced, m)
		}
	}
}

// with is the session's cost with the turn in progress's so far: nil and
// the models without a price while any has none. A nil s counts no
// earlier turn.
func (s *sessionSpend) with(turn *statestore.Spend) (*prices.Cost, []string) {
	var amount float64
	var unpriced []string
	if s != nil {
		s.mu.Lock()
		amount, unpriced = s.amount, slices.Clone(s.unpriced)
		s.mu.Unlock()
	}
	if turn != nil {
		if turn.Cost != nil {
			amount += turn.Cost.Amount
		}
		for _, m := range turn.Unpriced {
			if !slices.Contains(unpriced, m) {
				unpriced = append(unpriced, m)
			}
		}
	}
	if len(unpriced) > 0 {
		return nil, unpriced
	}
	return prices.Dollars(amount), nil
}

// appendCost appends c as ACP's Cost.
func appendCost(b []byte, c *prices.Cost) []byte {
	b = append(b, `{"amount":`...)
	b = strconv.AppendFloat(b, c.Amount, 'f', -1, 64)
	b = append(b, `,"currency":`...)
	b = jsonrpc.AppendString(b, c.Currency)
	return append(b, '}')
}

// appendUnknownCost appends the members of _meta.coda that say the cost is
// unknown, and which models have no price.
func appendUnknownCost(b []byte, unpriced []string) []byte {
	b = append(b, `"cost":"unknown","unpriced":`...)
	return appendStrings(b, unpriced)
}
