package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coda-acp/coda/internal/prices"
)

// The catalog prices a model it knows, with its source; the config sets
// a price for a model it does not know and overrides one it does (cached
// figures default to input); a local server priced at zero costs zero; a
// model nobody prices has no price, never a zero one.
func TestConfig_prices(t *testing.T) {
	path := writeConfig(t, `
[models."anthropic:claude-opus-5"]
price = { input = 1, output = 2, cached_read = 0.1, cached_write = 1.5 }

[models."anthropic:claude-sonnet-5-5"]
price = { input = 2, output = 10 }

[models."ollama:qwen3"]
price = { input = 0, output = 0 }
`)
	c, err := loadConfig(path, configEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	catalog, _ := prices.Lookup("anthropic", "claude-opus-4-5")
	tests := []struct {
		spec string
		want *prices.Price
	}{
		{"anthropic:claude-opus-4-5", &catalog},
		{"anthropic:claude-opus-5", &prices.Price{Input: 1, Output: 2, CachedRead: 0.1, CachedWrite: 1.5}},
		{"anthropic:claude-sonnet-5-5", &prices.Price{Input: 2, Output: 10, CachedRead: 2, CachedWrite: 2}},
		{"ollama:qwen3", &prices.Price{}},
		{"ollama:llama3.3", nil},
		{"openai:gpt-5.5", nil},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, c.catalog.Facts(tt.spec).Price); diff != "" {
			t.Errorf("%s's price (-want +got):\n%s", tt.spec, diff)
		}
	}
	if catalog.Source == "" || catalog.Date == "" {
		t.Errorf("the catalog's price has no source: %+v", catalog)
	}
}

func TestConfig_pricesRefused(t *testing.T) {
	for _, tt := range []struct{ config, want string }{
		{`[models."qwen3"]
price = { input = 0, output = 0 }`, `[models."qwen3"]`},
		{`[models."ollama:qwen3"]
price = { input = 1 }`, `give input and output`},
		{`[models."ollama:qwen3"]
price = { input = 1, output = -2 }`, `price.output = -2`},
		{`[models."ollama:qwen3"]
price = { input = 1, output = 2, cache = 3 }`, `unknown key models."ollama:qwen3".price.cache`},
	} {
		_, err := loadConfig(writeConfig(t, tt.config), configEnv(nil))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("config %q: err = %v, want it to say %q", tt.config, err, tt.want)
		}
	}
}
