package acp

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coda-acp/coda/internal/prices"
	statestore "github.com/coda-acp/coda/store"
)

// A session's cost is its finished turns' and the running one's so far;
// once any turn called a model without a price, it is unknown for the rest
// of the session, naming the model.
func TestSessionSpend(t *testing.T) {
	var s sessionSpend
	s.add(statestore.Spend{Calls: 2, Cost: &prices.Cost{Amount: 0.25, Currency: "USD"}})
	cost, unpriced := s.with(&statestore.Spend{Calls: 1, Cost: &prices.Cost{Amount: 0.5, Currency: "USD"}})
	if diff := cmp.Diff(&prices.Cost{Amount: 0.75, Currency: "USD"}, cost); diff != "" || unpriced != nil {
		t.Errorf("with a priced turn (-want +got):\n%s (unpriced %q)", diff, unpriced)
	}
	s.add(statestore.Spend{Calls: 1, Unpriced: []string{"ollama:qwen3"}})
	cost, unpriced = s.with(&statestore.Spend{Calls: 1, Cost: &prices.Cost{Amount: 0.5, Currency: "USD"}})
	if cost != nil || !cmp.Equal(unpriced, []string{"ollama:qwen3"}) {
		t.Errorf("after an unpriced turn: %v, %q; want no cost, the model named", cost, unpriced)
	}
	var none *sessionSpend
	if cost, _ := none.with(nil); cost == nil || cost.Amount != 0 {
		t.Errorf("no session, no turn: %v", cost)
	}
}
