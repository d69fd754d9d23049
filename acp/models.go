package acp

import (
	"context"

	"github.com/coda-acp/coda/acp/pickers"
)

// Models is what acp asks of the model catalog beyond the launch's model
// (cmd/coda's internal/catalog, with its launch's stages for Reach): acp's
// own interface, so that it imports no catalog. Options.Models nil knows
// no other model: no default, no picker list, no effort option, every
// PROVIDER:MODEL taken and every turn reachable.
type Models interface {
	// Default is the model for stages that name none: the configured one,
	// else one found (a local Ollama that answers); "" when there is none.
	// With wait false it answers at once, "" while it is still looking;
	// with wait it may take a moment, so acp waits only in a turn's
	// goroutine or in authenticate (auth.go).
	Default(wait bool) string
	// Picker are more models the model option offers (config.toml's
	// [picker] models), after the launch's.
	Picker() []string
	// Discovers reports whether Discover lists anything ([picker]
	// discover); Discover lists the models the providers offer, for the
	// model option after Picker: asked once, in the background, when the
	// first session starts, and kept for the process (pickers.Listing);
	// ctx ends when Serve does.
	Discovers() bool
	Discover(ctx context.Context) []ListedModel
	// Efforts says which reasoning effort levels the model spec names
	// takes, in order, and the level it is given when the session picks
	// none (--effort, else the config's; "" leaves it to the model). Nil
	// takes: no effort option for that model.
	Efforts(spec string) (takes []string, launch string)
	// Check says whether a model spec can be used: nil, an error wrapping
	// ErrAuthRequired when its key is not set (the message names the
	// variable), or another error when the spec itself is wrong.
	Check(spec string) error
	// Reach says why a turn could not reach a model when the user's model
	// is userModel and the default defaultModel, or nil when it can: the
	// message says what to set (a Hint, where it has one).
	Reach(userModel, defaultModel string) error
}

// A ListedModel is one model a provider lists, as the model option offers
// it.
type ListedModel = pickers.Listed

// noModels is Options.Models when none is given.
type noModels struct{}

func (noModels) Default(bool) string                    { return "" }
func (noModels) Picker() []string                       { return nil }
func (noModels) Discovers() bool                        { return false }
func (noModels) Discover(context.Context) []ListedModel { return nil }
func (noModels) Efforts(string) ([]string, string)      { return nil, "" }
func (noModels) Check(string) error                     { return nil }
func (noModels) Reach(string, string) error             { return nil }
