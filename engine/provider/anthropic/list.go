package anthropic

import (
	"context"
	"net/url"

	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/provider"
)

// NewLister lists the models the API offers to opts' key: GET /v1/models
// (https://docs.anthropic.com/en/api/models-list), newest first, at most
// provider.MaxListed, with each model's input limit where the listing
// gives it (max_input_tokens).
func NewLister(opts Options) provider.Lister {
	opts = opts.WithDefaults("anthropic", "", DefaultBaseURL)
	return lister{opts}
}

type lister struct{ opts Options }

// modelList is a page of GET /v1/models.
type modelList struct {
	Data []struct {
		ID             string  `json:"id"`
		Type           string  `json:"type"`
		MaxInputTokens float64 `json:"max_input_tokens"`
	} `json:"data"`
	HasMore bool   `json:"has_more"`
	LastID  string `json:"last_id"`
}

// maxPages bounds the pages a listing reads, whatever has_more says.
const maxPages = 10

func (l lister) List(ctx context.Context) ([]provider.Listed, error) {
	h := l.opts.Header("X-Api-Key", "")
	h.Set("Anthropic-Version", Version)
	call := l.opts.Call("", h)
	return provider.ListPages(ctx, maxPages, func(ctx context.Context, after string) ([]provider.Listed, string, error) {
		q := url.Values{"limit": {"1000"}}
		if after != "" {
			q.Set("after_id", after)
		}
		var page modelList
		if err := call.JSON(ctx, l.opts.BaseURL+"/v1/models?"+q.Encode(), nil, &page); err != nil {
			return nil, "", err
		}
		var out []provider.Listed
		for _, m := range page.Data {
			if m.ID != "" && (m.Type == "" || m.Type == "model") {
				out = append(out, provider.Listed{ID: m.ID, ContextWindow: llm.Window(m.MaxInputTokens)})
			}
		}
		if !page.HasMore {
			return out, "", nil
		}
		return out, page.LastID, nil
	})
}
