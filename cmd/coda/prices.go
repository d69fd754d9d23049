package main

import (
	"fmt"
	"math"

	"github.com/coda-acp/coda/internal/catalog"
	"github.com/coda-acp/coda/internal/prices"
)

// What a model costs (DESIGN §23): the catalog's prices
// (internal/prices), and what the config sets over them:
//
//	[models."anthropic:claude-sonnet-5-5"]
//	price = { input = 2, output = 10, cached_read = 0.10, cached_write = 2.50 }
//
//	[models."ollama:qwen3"]
//	price = { input = 0, output = 0 }   # a local server costs nothing
//
// Figures are US dollars per million tokens. cached_read and cached_write
// default to input: a prompt token the price does not set apart costs
// what any prompt token does.

// modelSettings is one [models."PROVIDER:MODEL"] table.
type modelSettings struct {
	Price *priceConfig `toml:"price"`
}

// priceConfig is a price as the config writes it.
type priceConfig struct {
	Input       *float64 `toml:"input"`
	Output      *float64 `toml:"output"`
	CachedRead  *float64 `toml:"cached_read"`
	CachedWrite *float64 `toml:"cached_write"`
}

// checkPrices validates [models."…"]: each key a PROVIDER:MODEL spec, each
// price with its input and output, no figure negative or not a number.
func (c *config) checkPrices() error {
	for spec, m := range c.Models {
		key := fmt.Sprintf("models.%q", spec)
		if _, _, err := catalog.SplitSpec(spec); err != nil {
			return fmt.Errorf("[%s]: %w", key, err)
		}
		p := m.Price
		if p == nil {
			continue
		}
		if p.Input == nil || p.Output == nil {
			return fmt.Errorf("%s.price: give input and output (dollars per million tokens; 0 for a local server)", key)
		}
		for name, v := range map[string]*float64{"input": p.Input, "output": p.Output, "cached_read": p.CachedRead, "cached_write": p.CachedWrite} {
			if v != nil && (*v < 0 || math.IsNaN(*v) || math.IsInf(*v, 0)) {
				return fmt.Errorf("%s.price.%s = %v: want dollars per million tokens, 0 or more", key, name, *v)
			}
		}
	}
	return nil
}

// prices are the config's prices, by spec as written, for the catalog
// (catalog.Options.Prices), which lays them over its table's.
func (c *config) prices() map[string]prices.Price {
	out := map[string]prices.Price{}
	for spec, m := range c.Models {
		if p := m.Price; p != nil {
			out[spec] = p.price()
		}
	}
	return out
}

// price is the price p says; the cached figures default to input.
func (p *priceConfig) price() prices.Price {
	out := prices.Price{Input: *p.Input, Output: *p.Output, CachedRead: *p.Input, CachedWrite: *p.Input}
	if p.CachedRead != nil {
		out.CachedRead = *p.CachedRead
	}
	if p.CachedWrite != nil {
		out.CachedWrite = *p.CachedWrite
	}
	return out
}
