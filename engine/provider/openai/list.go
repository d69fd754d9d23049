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
	return provider.ListPages(ctx, 1, func(ctx context.Context, _ string) ([]provider.Listed, string, error) {
		var v modelList
		if err := call.JSON(ctx, l.opts.BaseURL+"/models", nil, &v); err != nil {
			return nil, "", err
		}
		var out []provider.Listed
		for _, d := range v.Data {
			if d.ID != "" {
				out = append(out, listed(d.ID, d.ContextLength, d.MaxModelLen, d.SupportedParameters, d.Architecture.OutputModalities))
			}
		}
		return out, "", nil
	})
}

// listed is one model of the list: whether it chats, and calls tools.
func listed(id string, contextLength, maxModelLen float64, params *[]string, modalities []string) provider.Listed {
	m := provider.Listed{ID: id, ContextWindow: llm.Window(max(contextLength, maxModelLen)), Embedding: provider.Embedding(id)}
	switch {
	case m.Embedding:
		m.NoTools = "it does not chat"
	case len(modalities) > 0 && !slices.Contains(modalities, "text"):
		m.Embedding, m.NoTools = true, "it writes no text"
	case params != nil && !slices.Contains(*params, "tools"):
		m.NoTools = "the server lists it without tools"
	}
	return m
}
