package main

import (
	"context"
	"sync"
	"time"

	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/provider"
	"github.com/coda-acp/coda/engine/provider/anthropic"
	"github.com/coda-acp/coda/engine/provider/gemini"
	"github.com/coda-acp/coda/engine/provider/ollama"
	"github.com/coda-acp/coda/engine/provider/openai"
	"github.com/coda-acp/coda/engine/provider/script"
	"github.com/coda-acp/coda/engine/provider/sse"
	"github.com/coda-acp/coda/internal/catalog"
)

// The models a config gives: what the catalog resolves a spec to, built
// as the provider of its kind (only cmd/coda picks providers).

// configModels are the engine's llm.Models over a catalog.
type configModels struct {
	cat   *catalog.Catalog
	sleep func(context.Context, time.Duration) error // backoff waits; nil is a real timer (tests inject one)

	mu     sync.Mutex
	cached map[string]llm.Model // by spec: a model keeps state across calls (a script's turns)
}

func newConfigModels(cat *catalog.Catalog) *configModels {
	return &configModels{cat: cat, cached: map[string]llm.Model{}}
}

// models resolves model specs against c.
func (c *config) models() *configModels { return c.modelSet }

// Model returns the model for spec ("PROVIDER:MODEL" or "script:PATH"),
// the same one each time for a spec. An unknown provider or a missing key
// is an error wrapping llm.ErrModelUnavailable.
func (m *configModels) Model(spec string) (llm.Model, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if model, ok := m.cached[spec]; ok {
		return model, nil
	}
	model, err := m.newModel(spec)
	if err != nil {
		return nil, err
	}
	m.cached[spec] = model
	return model, nil
}

func (m *configModels) newModel(named string) (llm.Model, error) {
	r, err := m.cat.Serve(named)
	if err != nil {
		return nil, err
	}
	if r.Name == "script" {
		return script.Open(r.Model)
	}
	p := r.Provider
	tries := 0
	if p.MaxRetries != nil {
		tries = *p.MaxRetries + 1
	}
	opts := provider.Options{
		Name: named, BaseURL: p.BaseURL, APIKey: r.Key, Headers: p.Headers,
		MaxTokens: p.MaxTokens, ThinkingBudget: p.ThinkingBudget,
		Timeout: time.Duration(p.Timeout), MaxCallTime: time.Duration(p.MaxCallTime),
		Retry:         sse.Retry{Tries: tries, Sleep: m.sleep},
		ContextWindow: r.Facts.ContextWindow, Efforts: r.Facts.Efforts, NoVision: !r.Sees,
		Effort: r.Effort,
		API:    p.API, Server: p.Server, NumCtx: p.NumCtx, Log: m.cat.Log(),
		Thinking: r.Thinking, NoForcedTool: r.NoForcedTool,
		NoCache: p.Cache != nil && !*p.Cache,
	}
	switch {
	case p.Kind == catalog.KindAnthropic:
		return anthropic.New(r.Model, opts), nil
	case p.Kind == catalog.KindOllama:
		return ollama.New(r.Model, opts), nil
	case p.Kind == catalog.KindGemini:
		return gemini.New(r.Model, opts), nil
	case p.API == provider.APIResponses:
		return openai.NewResponses(r.Model, opts), nil
	default:
		return openai.New(r.Model, opts), nil
	}
}
