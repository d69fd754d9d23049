package openai

import (
	"context"
	"slices"

	"github.com/coda-acp/coda/engine/provider"
)

// Lister lists the models of an OpenAI-style server (GET /models): OpenAI,
// OpenRouter, vLLM, llama.cpp, LM Studio, Ollama's /v1. It is a
// provider.Lister.
type Lister struct{ opts Options }

// NewLister returns the lister of the server opts names (its BaseURL and
// key; a zero BaseURL is OpenAI's).
func NewLister(opts Options) Lister {
	return Lister{opts.WithDefaults("openai", "models", DefaultBaseURL)}
}

// The reply of GET /models: OpenAI's {"data": [{"id": ...}]}, with what
// OpenRouter (context_length, supported_parameters, architecture) and vLLM
// (max_model_len) add.
type modelList struct {
	Data []struct {
		ID                  string    `json:"id"`
		ContextLength       int       `json:"context_length"`
		MaxModelLen         int       `json:"max_model_len"`
		SupportedParameters *[]string `json:"supported_parameters"`
		Architecture        struct {
			OutputModalities []string `json:"output_modalities"`
		} `json:"architecture"`
	} `json:"data"`
}

// List returns the server's models, at most provider.MaxListed, in the
// server's order: those whose names say they do not chat (embeddings,
// speech, images) marked Embedding, those OpenRouter lists without tools
// marked NoTools.
func (l Lister) List(ctx context.Context) ([]provider.Listed, error) {
	call := l.opts.Call("", l.opts.Header("Authorization", "Bearer "))
	var v modelList
	if err := call.JSON(ctx, l.opts.BaseURL+"/models", nil, &v); err != nil {
		return nil, err
	}
	out := make([]provider.Listed, 0, min(len(v.Data), provider.MaxListed))
	for _, d := range v.Data {
		if len(out) == provider.MaxListed {
			break
		}
		if d.ID == "" {
			continue
		}
		m := provider.Listed{ID: d.ID, ContextWindow: max(d.ContextLength, d.MaxModelLen), Embedding: provider.Embedding(d.ID)}
		switch out := d.Architecture.OutputModalities; {
		case m.Embedding:
			m.NoTools = "it does not chat"
		case len(out) > 0 && !slices.Contains(out, "text"):
			m.Embedding, m.NoTools = true, "it writes no text"
		case d.SupportedParameters != nil && !slices.Contains(*d.SupportedParameters, "tools"):
			m.NoTools = "the server lists it without tools"
		}
		out = append(out, m)
	}
	return out, nil
}
