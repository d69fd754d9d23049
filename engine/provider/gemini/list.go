package gemini

import (
	"context"
	"net/url"
	"slices"
	"strings"

	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/provider"
)

// NewLister lists the models the API offers to opts' key: models.list
// (https://ai.google.dev/api/models#method:-models.list), the ones that
// generate content (supportedGenerationMethods has generateContent), at
// most provider.MaxListed.
func NewLister(opts Options) provider.Lister {
	opts = opts.WithDefaults("gemini", "", DefaultBaseURL)
	return lister{opts}
}

type lister struct{ opts Options }

// modelList is a page of models.list.
type modelList struct {
	Models []struct {
		Name                       string   `json:"name"` // "models/gemini-2.5-flash"
		InputTokenLimit            float64  `json:"inputTokenLimit"`
		SupportedGenerationMethods []string `json:"supportedGenerationMethods"`
	} `json:"models"`
	NextPageToken string `json:"nextPageToken"`
}

// maxPages bounds the pages a listing reads, whatever the server's page
// tokens say.
const maxPages = 10

func (l lister) List(ctx context.Context) ([]provider.Listed, error) {
	call := l.opts.Call("", l.opts.Header("X-Goog-Api-Key", ""))
	return provider.ListPages(ctx, maxPages, func(ctx context.Context, token string) ([]provider.Listed, string, error) {
		q := url.Values{"pageSize": {"1000"}}
		if token != "" {
			q.Set("pageToken", token)
		}
		var page modelList
		if err := call.JSON(ctx, l.opts.BaseURL+"/models?"+q.Encode(), nil, &page); err != nil {
			return nil, "", err
		}
		var out []provider.Listed
		for _, m := range page.Models {
			if !slices.Contains(m.SupportedGenerationMethods, "generateContent") {
				continue // embeddings, AQA, Imagen and Veo
			}
			id := strings.TrimPrefix(m.Name, "models/")
			out = append(out, provider.Listed{ID: id, ContextWindow: llm.Window(m.InputTokenLimit), Embedding: provider.Embedding(id), NoTools: noTools(id)})
		}
		return out, page.NextPageToken, nil
	})
}

// noTools says why a model the list offers cannot call functions: Gemma
// on the Gemini API, and the models that make images or speech
// (https://ai.google.dev/gemini-api/docs/models: function calling "not
// supported").
func noTools(id string) string {
	switch {
	case strings.HasPrefix(id, "gemma-"):
		return "Gemma on the Gemini API has no function calling"
	case strings.Contains(id, "-image"):
		return "an image generation model: it has no function calling"
	case strings.Contains(id, "-tts"), strings.Contains(id, "native-audio"):
		return "a speech model: it has no function calling"
	}
	return ""
}
