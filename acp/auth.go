package acp

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/coda-acp/coda/engine"
)

// Auth, and serving without a key. coda always starts when an editor
// launches it; initialize offers one auth method, "env": the model's API key
// is read from the environment coda was started with. A running process
// cannot read a changed environment, so "set" means set when coda started
// (config.toml, like the environment, is read at start-up too): authenticate
// succeeds when a model can be reached, and otherwise answers -32000 saying
// what to set, as a prompt that cannot reach a model does; the session stays
// usable (a model whose key is set can be picked with the model option or
// /model).

// authMethodEnv is the id of coda's one auth method.
const authMethodEnv = "env"

// authMethods are initialize's authMethods: what the description says to
// set is what m says keeps the launch's models (userModel, defaultModel)
// from being reached.
func authMethods(m Models, userModel, defaultModel string) []authMethod {
	description := "coda reads its model's API key from the environment it starts with (ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY or GOOGLE_API_KEY, OPENROUTER_API_KEY, or the api_key_env a provider names in config.toml); the key of the model coda is set to use is set."
	if err := m.Reach(userModel, defaultModel); err != nil {
		description = hintOf(err)
	}
	return []authMethod{{ID: authMethodEnv, Name: "API key from the environment", Description: description}}
}

// A Hint is an error of Models.Reach or Check that says, in a user's
// words, what to set: the auth method's description, and what a prompt
// that cannot reach a model is told.
type Hint interface {
	error
	Hint() string
}

// hintOf is what err tells a user to set: its Hint, else its message
// without the code's name.
func hintOf(err error) string {
	if h, ok := errors.AsType[Hint](err); ok {
		return h.Hint()
	}
	return strings.TrimPrefix(err.Error(), ErrAuthRequired.Error()+": ")
}

// authenticate handles authenticate: it succeeds when the launch's model
// can be reached.
func (s *Server) authenticate(_ context.Context, _ *request[authenticateResponse], p *authenticateRequest) (*authenticateResponse, error) {
	if *p.MethodID != authMethodEnv {
		return nil, fmt.Errorf("%w: methodId: coda offers no method %q (it offers %q)", ErrInvalidParams, *p.MethodID, authMethodEnv)
	}
	if err := reach(s.opts.Models, s.opts.UserModel, s.pick.Default(true)); err != nil {
		return nil, err
	}
	return &authenticateResponse{}, nil
}

// reach says why a turn whose user model is userModel cannot reach a model
// (Models.Reach): an ErrAuthRequired error whose words say what to set, or
// nil.
func reach(m Models, userModel, defaultModel string) error {
	if err := m.Reach(userModel, defaultModel); err != nil {
		if _, ok := errors.AsType[Hint](err); ok {
			return fmt.Errorf("%w: %s (or pick a model whose key is set with /model)", ErrAuthRequired, hintOf(err))
		}
		return fmt.Errorf("%w: %v (coda reads the environment and config.toml when it starts: restart the agent after setting it, or pick a model whose key is set with /model)", ErrAuthRequired, err)
	}
	return nil
}

// startTurn is what a prompt's turn does before it runs, off the read
// loop: it finds the default model (waiting for a search under way) and
// refuses the prompt, -32000, when no model can be reached; then it names
// the session after its first prompt.
func (s *Server) startTurn(sess *session, turn *engine.Turn, prompt []contentBlock) error {
	turn.DefaultModel = s.pick.Default(true)
	if err := reach(s.opts.Models, turn.UserModel, turn.DefaultModel); err != nil {
		return err
	}
	s.load.nameSession(sess, prompt)
	return nil
}
