package store

import "github.com/coda-acp/coda/internal/prices"

// Spend is what model calls used and cost (DESIGN §23): a run's in
// run.json, its workers' and children's included. Tokens count as
// llm.Usage counts them: InputTokens every prompt token, cached or not;
// OutputTokens every output token, reasoning included.
type Spend struct {
	Calls            int `json:"calls"`
	InputTokens      int `json:"inputTokens"`
	OutputTokens     int `json:"outputTokens"`
	ReasoningTokens  int `json:"reasoningTokens"`
	CacheReadTokens  int `json:"cacheReadTokens"`
	CacheWriteTokens int `json:"cacheWriteTokens"`
	// Cost is what the calls cost; absent while the price of any model
	// called is unknown (Unpriced names them): an unknown price is never
	// counted as zero.
	Cost     *prices.Cost `json:"cost,omitempty"`
	Unpriced []string     `json:"unpriced,omitempty"`
}
