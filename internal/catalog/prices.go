package catalog

import (
	"strings"

	"github.com/coda-acp/coda/internal/prices"
)

// price is what the model spec (canonical: "PROVIDER:MODEL") names costs
// (DESIGN §23): the config's price for it, else internal/prices' table's;
// nil when neither knows, which a cost never counts as zero.
func (c *Catalog) price(spec string) *prices.Price {
	for key, p := range c.prices {
		if key == spec || c.Canonical(key) == spec {
			return &p
		}
	}
	provider, model, ok := strings.Cut(spec, ":")
	if !ok {
		return nil
	}
	if p, ok := prices.Lookup(provider, model); ok {
		return &p
	}
	return nil
}
