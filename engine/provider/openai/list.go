package openai

import (
	"context"
	"slices"

	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/provider"
)

// NewLister lists the models of the OpenAI-style server opts names (its
// BaseURL, OpenAI's when zero, and key) with GET /models: OpenAI,
// OpenRouter, vLLM, llama.cpp, LM Studio, Ollama's /v1.
func NewLister(opts Options) provider.Lister {
	return lister{opts.WithDefaults("openai", "", DefaultBaseURL)}
}

type lister struct{ opts Options }

// The reply of GET /models: OpenAI's {"data": [{"id": ...}]}, with what
// OpenRouter (context_length, supported_parameters, architecture) and vLLM
// (max_model_len) add.
type modelList struct {
	Data []struct {
		ID                  string    `json:"id"`
		ContextLength       float64   `json:"context_length"`
		MaxModelLen         float64   `json:"max_model_len"`
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
func (l lister) List(ctx context.Context) ([]provider.Listed, error) {
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
		m := provider.Listed{ID: d.ID, ContextWindow: llm.Window(max(d.ContextLength, d.MaxModelLen)), Embedding: provider.Embedding(d.ID)}
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
