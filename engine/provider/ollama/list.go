package ollama

import (
	"context"
	"slices"
	"strings"

	"github.com/coda-acp/coda/engine/provider"
)

// NewLister lists the models an Ollama server has pulled (GET /api/tags,
// docs.ollama.com/api/tags), at most provider.MaxListed: embedding models
// (by name, a BERT family, or an "embedding" capability) marked
// Embedding, and models whose capabilities the server lists without
// "tools" marked NoTools.
func NewLister(opts Options) provider.Lister {
	opts = opts.WithDefaults("ollama", "", DefaultBaseURL)
	opts.BaseURL = strings.TrimSuffix(opts.BaseURL, "/v1")
	return lister{opts}
}

type lister struct{ opts Options }

type tags struct {
	Models []struct {
		Name    string `json:"name"`
		Details struct {
			Family   string   `json:"family"`
			Families []string `json:"families"`
		} `json:"details"`
		Capabilities []string `json:"capabilities"` // newer servers
	} `json:"models"`
}

func (l lister) List(ctx context.Context) ([]provider.Listed, error) {
	call := l.opts.Call("", l.opts.Header("Authorization", "Bearer "))
	return provider.ListPages(ctx, 1, func(ctx context.Context, _ string) ([]provider.Listed, string, error) {
		var v tags
		if err := call.JSON(ctx, l.opts.BaseURL+"/api/tags", nil, &v); err != nil {
			return nil, "", err
		}
		var out []provider.Listed
		for _, m := range v.Models {
			if m.Name == "" {
				continue
			}
			ls := provider.Listed{ID: m.Name}
			bert := strings.Contains(m.Details.Family, "bert") || slices.ContainsFunc(m.Details.Families, func(f string) bool { return strings.Contains(f, "bert") })
			caps := m.Capabilities
			switch {
			case provider.Embedding(m.Name) || bert || slices.Contains(caps, "embedding") && !slices.Contains(caps, "completion"):
				ls.Embedding, ls.NoTools = true, "an embedding model: it does not chat"
			case caps != nil && !slices.Contains(caps, "tools"):
				ls.NoTools = "Ollama lists it without the tools capability"
			}
			out = append(out, ls)
		}
		return out, "", nil
	})
}
