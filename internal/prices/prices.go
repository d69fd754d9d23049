// Package prices is what model tokens cost (DESIGN §23): the Price of a
// model, in US dollars per million tokens, with the vendor page and the
// date it was read from; what a call's tokens come to at it; and the
// prices coda knows (table.go), which the model catalog looks up and a
// config may set or override. It imports nothing of coda.
package prices

import "math"

// Currency is the unit of every price and cost: US dollars, the unit
// every vendor in the table bills in (ACP's Cost.currency, ISO 4217).
const Currency = "USD"

// A Price is what a model's tokens cost, in dollars per million tokens.
// Input is a prompt token neither read from nor written to the provider's
// prompt cache; CachedRead one read from it and CachedWrite one written
// to it; Output every output token, reasoning included (every vendor in
// the table bills reasoning as output). Source is the vendor's pricing
// page and Date the day the figures were read from it; both "" for a
// price the config sets.
type Price struct {
	Input       float64 `json:"input"`
	Output      float64 `json:"output"`
	CachedRead  float64 `json:"cachedRead"`
	CachedWrite float64 `json:"cachedWrite"`
	Source      string  `json:"source,omitempty"`
	Date        string  `json:"date,omitempty"`
}

// A Cost is an amount of money, as ACP's Cost has it.
type Cost struct {
	Amount   float64 `json:"amount"`
	Currency string  `json:"currency"`
}

// Of is what a call's tokens cost at p, in dollars: input counts every
// prompt token, cached or not, of which cachedRead were read from the
// cache and cachedWrite written to it; output counts every output token.
func (p Price) Of(input, output, cachedRead, cachedWrite int) float64 {
	fresh := max(0, input-cachedRead-cachedWrite)
	return (float64(fresh)*p.Input + float64(cachedRead)*p.CachedRead +
		float64(cachedWrite)*p.CachedWrite + float64(output)*p.Output) / 1e6
}

// Dollars is amount as a Cost, rounded to a millionth of a dollar: a sum
// of many calls' float costs carries noise far below a cent that a
// record or the wire need not.
func Dollars(amount float64) *Cost {
	return &Cost{Amount: math.Round(amount*1e6) / 1e6, Currency: Currency}
}
