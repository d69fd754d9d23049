package engine

import (
	"slices"
	"sync"

	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/internal/prices"
	"github.com/coda-acp/coda/store"
)

// What a turn's model calls used and cost (DESIGN §23). Each run keeps
// its own spend, and each call is added to its run's and to every run
// above it, so that the turn's run counts every call of the turn: its
// stages', its repairs', its workers' and children's. took (stage.go) is
// the one place a reply's usage is known.

// A spend is a run's tokens and cost so far.
type spend struct {
	mu     sync.Mutex
	up     *spend // the parent run's; nil for the turn's
	s      store.Spend
	amount float64 // dollars, of the priced calls
}

func newSpend(parent *run) *spend {
	if parent == nil {
		return &spend{}
	}
	return &spend{up: parent.spent}
}

// add counts one call of the model spec names, which used u, in s and in
// every spend above it, and returns the turn's spend after it.
func (s *spend) add(spec string, u llm.Usage, p *prices.Price) store.Spend {
	var turn store.Spend
	for at := s; at != nil; at = at.up {
		turn = at.addOne(spec, u, p)
	}
	return turn
}

func (s *spend) addOne(spec string, u llm.Usage, p *prices.Price) store.Spend {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := &s.s
	t.Calls++
	t.InputTokens += u.InputTokens
	t.OutputTokens += u.OutputTokens
	t.ReasoningTokens += u.ReasoningTokens
	t.CacheReadTokens += u.CacheReadTokens
	t.CacheWriteTokens += u.CacheWriteTokens
	if p == nil {
		if !slices.Contains(t.Unpriced, spec) {
			t.Unpriced = append(t.Unpriced, spec)
		}
	} else {
		s.amount += callCost(u, p)
	}
	return s.totalLocked()
}

// total is the spend so far.
func (s *spend) total() store.Spend {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.totalLocked()
}

func (s *spend) totalLocked() store.Spend {
	t := s.s
	t.Unpriced = slices.Clone(t.Unpriced)
	t.Cost = nil
	if len(t.Unpriced) == 0 {
		t.Cost = prices.Dollars(s.amount)
	}
	return t
}

// callCost is what a call that used u costs at p, in dollars.
func callCost(u llm.Usage, p *prices.Price) float64 {
	return p.Of(u.InputTokens, u.OutputTokens, u.CacheReadTokens, u.CacheWriteTokens)
}

// price is what the model spec names costs; nil when it is not known.
func (r *run) price(spec string) *prices.Price {
	if r.e.ModelFacts == nil {
		return nil
	}
	return r.e.ModelFacts(spec).Price
}

// costed adds the cost of the call just recorded (call), which the model
// spec names used u of, to its line in status.json and to the visit's.
func (vr *visitRecord) costed(spec string, u llm.Usage, p *prices.Price) {
	if vr.Dir() == "" {
		return
	}
	vr.spent.add(spec, u, p)
	if p != nil && len(vr.status.Calls) > 0 {
		vr.status.Calls[len(vr.status.Calls)-1].Cost = prices.Dollars(callCost(u, p))
	}
}

// costs is the visit's cost, nil while a model it called has no known
// price, and the models without one.
func (vr *visitRecord) costs() (*prices.Cost, []string) {
	t := vr.spent.total()
	return t.Cost, t.Unpriced
}

// restore puts back what a resumed run's checkpoint says it had spent
// (resume.go); nil, from a checkpoint written before, puts back nothing.
func (s *spend) restore(from *store.Spend) {
	if from == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.s = *from
	s.s.Cost, s.s.Unpriced = nil, slices.Clone(from.Unpriced)
	if from.Cost != nil {
		s.amount = from.Cost.Amount
	}
}
