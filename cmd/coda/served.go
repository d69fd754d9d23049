package main

import (
	"context"

	"github.com/coda-acp/coda/acp"
	"github.com/coda-acp/coda/internal/catalog"
)

// servedModels is the catalog as acp asks it (acp.Models), with what the
// launch adds: whether its agent's stages (and the agents they spawn) can
// reach a model.
type servedModels struct {
	cat *catalog.Catalog
	l   *launch
	// launch is the launch's model spec when serving began, whose
	// provider the picker always lists.
	launch string
}

func (m *servedModels) Default(wait bool) string { return m.cat.Default(wait) }
func (m *servedModels) Picker() []string         { return m.cat.Picker() }
func (m *servedModels) Discovers() bool          { return m.cat.Discovers() }

func (m *servedModels) Discover(ctx context.Context) []acp.ListedModel {
	listed := m.cat.Discover(ctx, m.launch)
	out := make([]acp.ListedModel, len(listed))
	for i, l := range listed {
		out[i] = acp.ListedModel{Spec: l.Spec, Name: l.Name}
	}
	return out
}

func (m *servedModels) Efforts(spec string) ([]string, string) { return m.cat.Efforts(spec) }

// Check is the model picker's: a missing key is ACP's authentication
// required.
func (m *servedModels) Check(spec string) error { return authError(m.cat.Check(spec)) }

func (m *servedModels) Reach(userModel, defaultModel string) error {
	return m.l.preflight(m.cat, userModel, defaultModel)
}
