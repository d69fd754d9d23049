package main

import (
	"errors"
	"fmt"

	"github.com/coda-acp/coda/acp"
	"github.com/coda-acp/coda/internal/catalog"
)

// What serving without a model needs: what to tell the user to set. Which
// model coda uses when none is configured is the catalog's
// (internal/catalog/default.go).

// errNoModel is a stage without any model to try (noModelError is it).
var errNoModel = errors.New("no model")

// noModelError says what to do when a stage has no model at all: in a
// user's words, what to set (a key, --model, default_model), and which
// stage only when the agent has more than one to tell apart.
type noModelError struct {
	stage  string
	stages int // how many the agent has
}

func (e noModelError) Error() string {
	which := ""
	if e.stages > 1 {
		which = fmt.Sprintf(" (the agent's stage %s names none)", e.stage)
	}
	return fmt.Sprintf("no model to use%s: set an API key in the environment (%s), or pass --model PROVIDER:MODEL (for example --model anthropic:%s, or --model ollama:MODEL for a local Ollama), or set default_model in the config file",
		which, catalog.KeysText(), catalog.DefaultModel("anthropic"))
}

func (e noModelError) Is(target error) bool { return target == errNoModel }

// Hint says in a user's words what to set (acp's auth method).
func (e noModelError) Hint() string {
	return fmt.Sprintf("No model is set up. Set an API key in the environment coda starts with (%s), or start coda with --model PROVIDER:MODEL (for example --model anthropic:%s, or --model ollama:MODEL for a local Ollama), then restart the agent.",
		catalog.KeysText(), catalog.DefaultModel("anthropic"))
}

// servable reports whether a model problem lets coda serve anyway: a key
// or a model the user can still supply, not a wrong spec.
func servable(err error) bool {
	return errors.As(err, new(catalog.MissingKey)) || errors.Is(err, errNoModel)
}

// authError marks a missing key as ACP's authentication required, for the
// model picker (acp.Models.Check).
func authError(err error) error {
	if errors.As(err, new(catalog.MissingKey)) {
		return fmt.Errorf("%w: %v", acp.ErrAuthRequired, err)
	}
	return err
}
