package catalog

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coda-acp/coda/engine/provider"
	"github.com/coda-acp/coda/engine/provider/anthropic"
	"github.com/coda-acp/coda/engine/provider/gemini"
	"github.com/coda-acp/coda/engine/provider/ollama"
	"github.com/coda-acp/coda/engine/provider/openai"
)

// The live model list (DESIGN §16): the models each provider lists, for the
// editor's model picker beside [picker] models. acp asks once, in the
// background, when the first session starts (acp.Models.Discover), and
// keeps the answer for the process; `[picker] discover = false` turns it
// off.
//
// A listing that gives a model's window (OpenRouter, vLLM, Anthropic)
// tells the catalog, where its table knows none, for fitting runs in the window
// (engine/compact.go).
//
// A provider is listed when its key is set, or, for one that takes no key
// (Ollama, a local server), when the config file has its table or the
// launch's model is one of its own: coda does not knock on localhost for a
// user who never named it. Every provider is asked at once, each within
// provider.ListTimeout, and each lists at most provider.MaxListed; the
// whole list is cut at provider.MaxListed too. Embedding and other models
// that do not chat are left out; a model that cannot call tools (the
// listing says so, or the catalog or the config does) is marked. A provider
// that fails is logged at debug level and left out: the picker is a
// convenience, never a reason to fail.

// newLister makes the lister of a provider of kind.
type newLister func(kind string, opts provider.Options) provider.Lister

// A Listed is one model a provider lists, as the model picker offers it.
type Listed struct {
	Spec string // PROVIDER:MODEL, the option's value
	Name string // as a picker shows it: the spec, marked "(no tools)" where it cannot call tools
}

// listerFor is the lister of a provider of kind.
func listerFor(kind string, opts provider.Options) provider.Lister {
	switch kind {
	case KindAnthropic:
		return anthropic.NewLister(opts)
	case KindGemini:
		return gemini.NewLister(opts)
	case KindOllama:
		return ollama.NewLister(opts)
	}
	return openai.NewLister(opts)
}

// listable are the providers to list, by name, sorted, each with its key:
// launch is the launch's model spec, whose provider is always listed.
func (c *Catalog) listable(launch string) (names []string, keys map[string]string) {
	keys = map[string]string{}
	launchProvider, _, _ := strings.Cut(launch, ":")
	for name, p := range c.providers {
		_, key, err := c.reach(name+":", name)
		if err != nil {
			continue
		}
		named := c.named[name]
		needsKey := p.APIKeyEnv != nil && *p.APIKeyEnv != ""
		if needsKey || named || name == launchProvider {
			names = append(names, name)
			keys[name] = key
		}
	}
	slices.Sort(names)
	return names, keys
}

// Discovers reports whether the picker lists the providers' models
// ([picker] discover, on by default).
func (c *Catalog) Discovers() bool { return c.discover }

// Discover lists the models the providers offer, for the picker after
// Picker: launch is the launch's model spec.
func (c *Catalog) Discover(ctx context.Context, launch string) []Listed {
	names, keys := c.listable(launch)
	lists := make([][]provider.Listed, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		p := c.providers[name]
		opts := provider.Options{Name: name, BaseURL: p.BaseURL, APIKey: keys[name], Headers: p.Headers, Timeout: provider.ListTimeout, Log: c.Log()}
		makeLister := c.lister
		if makeLister == nil {
			makeLister = listerFor
		}
		lister := makeLister(p.Kind, opts)
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, provider.ListTimeout)
			defer cancel()
			start := time.Now()
			listed, err := lister.List(ctx)
			if err != nil {
				c.Log().Debug("listing a provider's models", "provider", name, "err", err, "took", time.Since(start))
				return
			}
			lists[i] = listed
		})
	}
	wg.Wait()
	var out []Listed
	for i, name := range names {
		for _, m := range lists[i] {
			if len(out) == provider.MaxListed {
				return out
			}
			if m.Embedding || m.ID == "" {
				continue
			}
			spec := name + ":" + m.ID
			if m.ContextWindow > 0 {
				c.learnWindow(spec, m.ContextWindow)
			}
			entry := Listed{Spec: spec, Name: spec}
			if m.NoTools != "" || c.Facts(spec).NoTools != "" {
				entry.Name += " (no tools)"
			}
			out = append(out, entry)
		}
	}
	return out
}

// learnWindow keeps a window a listing gave for the model spec names.
func (c *Catalog) learnWindow(spec string, window int) {
	c.listedMu.Lock()
	defer c.listedMu.Unlock()
	if c.listedWindows == nil {
		c.listedWindows = map[string]int{}
	}
	c.listedWindows[spec] = window
}

// listedWindow is the window a listing gave for the model spec names; 0
// when none did.
func (c *Catalog) listedWindow(spec string) int {
	c.listedMu.Lock()
	defer c.listedMu.Unlock()
	return c.listedWindows[spec]
}
