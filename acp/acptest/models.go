package acptest

import (
	"context"

	"github.com/coda-acp/coda/acp/pickers"
)

// Models is an acp.Models for tests: each answer is its field's, and a nil
// field answers as no catalog would (no default, no list, no effort
// option, every model taken and reachable).
type Models struct {
	DefaultFunc  func(wait bool) string
	PickerModels []string
	DiscoverFunc func(ctx context.Context) []pickers.Listed
	EffortsFunc  func(spec string) (takes []string, launch string)
	CheckFunc    func(spec string) error
	ReachFunc    func(userModel, defaultModel string) error
}

func (m *Models) Default(wait bool) string {
	if m.DefaultFunc == nil {
		return ""
	}
	return m.DefaultFunc(wait)
}

func (m *Models) Picker() []string { return m.PickerModels }

func (m *Models) Discovers() bool { return m.DiscoverFunc != nil }

func (m *Models) Discover(ctx context.Context) []pickers.Listed {
	if m.DiscoverFunc == nil {
		return nil
	}
	return m.DiscoverFunc(ctx)
}

func (m *Models) Efforts(spec string) ([]string, string) {
	if m.EffortsFunc == nil {
		return nil, ""
	}
	return m.EffortsFunc(spec)
}

func (m *Models) Check(spec string) error {
	if m.CheckFunc == nil {
		return nil
	}
	return m.CheckFunc(spec)
}

func (m *Models) Reach(userModel, defaultModel string) error {
	if m.ReachFunc == nil {
		return nil
	}
	return m.ReachFunc(userModel, defaultModel)
}
