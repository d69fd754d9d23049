package acp

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/coda-acp/coda/acp/editor"
	"github.com/coda-acp/coda/acp/pickers"
	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/internal/jsonrpc"
	"github.com/coda-acp/coda/validators"
)

// The editor's pickers as a session has them: acp/pickers says what each
// option shows, what a pick stores and what it refuses; here the picks are
// set (set_config_option, set_mode, the slash commands), kept with the
// session, and sent.

// The config option ids, and the modes acp names.
const (
	optionFormat = pickers.OptionFormat
	optionModel  = pickers.OptionModel
	optionEffort = pickers.OptionEffort
	optionMode   = pickers.OptionMode

	modeAsk      = pickers.ModeAsk
	modeAutoEdit = pickers.ModeAutoEdit
)

// knownMode reports whether coda has the mode id.
func knownMode(id string) bool { return pickers.KnownMode(id) }

// picks are the session's picks.
func (sess *session) picks() pickers.Picks {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	return pickers.Picks{Model: sess.model, Effort: sess.effort, Mode: sess.mode}
}

// pick keeps the session's picks.
func (sess *session) pick(p pickers.Picks) {
	sess.mu.Lock()
	sess.model, sess.effort, sess.mode = p.Model, p.Effort, p.Mode
	sess.mu.Unlock()
}

// invalid is a picker's refusal as the request's fault.
func invalid(err error) error { return fmt.Errorf("%w: %v", ErrInvalidParams, err) }

// setOption sets one of the session's options, as set_config_option and
// the slash commands do; it returns the warnings the change gives (formats
// retiring a blueprint's checks, an effort the new model cannot take). A
// session's options change one message at a time, on the read loop or in
// the session's order off it (order.go), so compiling from its levels and
// then storing cannot interleave with another change.
func (s *Server) setOption(sess *session, id, value string) ([]string, error) {
	picks := sess.picks()
	var warnings []string
	switch {
	case id == optionFormat:
		if err := s.out.Shapes(optionFormat); err != nil {
			return nil, err
		}
		config := validators.Canonical(value)
		outs, err := s.out.Session(sess.meta, config)
		if err != nil {
			return nil, err
		}
		sess.mu.Lock()
		sess.config, sess.outputs = config, outs
		sess.mu.Unlock()
		return outs.Warnings, nil
	case id == optionModel:
		if err := s.checkModel(value); err != nil {
			return nil, err
		}
		picks, warnings = s.pick.PickModel(picks, value)
	case id == optionEffort && s.pick.HasEffort(picks):
		var err error
		if picks, err = s.pick.PickEffort(picks, value); err != nil {
			return nil, invalid(err)
		}
	case id == optionMode:
		var err error
		if picks, err = pickers.PickMode(picks, value); err != nil {
			return nil, invalid(err)
		}
	default:
		var ids []string
		for _, o := range s.configOptions(sess) {
			ids = append(ids, o.ID)
		}
		list := strings.Join(ids, ", ")
		if n := len(ids); n > 1 {
			list = strings.Join(ids[:n-1], ", ") + " and " + ids[n-1]
		}
		return nil, fmt.Errorf("%w: configId: coda has no option %q (it has %s)", ErrInvalidParams, id, list)
	}
	sess.pick(picks)
	return warnings, nil
}

// checkModel refuses a model spec coda cannot use at all (not
// PROVIDER:MODEL, a script model where none may be picked, an unknown
// provider). One whose key is missing is taken: the prompt then says what
// to set.
func (s *Server) checkModel(spec string) error {
	if err := s.pick.CheckSpec(spec); err != nil {
		return invalid(err)
	}
	if err := s.opts.Models.Check(spec); err != nil && !errors.Is(err, ErrAuthRequired) {
		return invalid(err)
	}
	return nil
}

// configOptions are the session's options, as the client shows them: the
// answer's format (for an agent that gives one), then the pickers'.
func (s *Server) configOptions(sess *session) []configOption {
	sess.mu.Lock()
	outs := sess.outputs
	sess.mu.Unlock()
	var opts []configOption
	if s.out.Shapes("") == nil { // an agent that gives no answer has no format to pick
		opts = append(opts, s.out.FormatOption(outs))
	}
	return append(opts, s.pick.Options(sess.picks())...)
}

// sessionResponse is what session/new, load and resume answer besides
// the id: the options, the modes, and the warnings (more, those not "").
func (s *Server) sessionResponse(sess *session, more ...string) *loadSessionResponse {
	s.startListing()
	_, listed := s.pick.Listing.Listed() // before the options are made: they have it
	sess.mu.Lock()
	sess.listSent = listed
	warnings, mode, set := sess.outputs.Warnings, sess.mode, sess.mcp
	sess.mu.Unlock()
	warnings = slices.Concat(warnings, set.Warnings())
	for _, w := range more {
		if w != "" {
			warnings = append(warnings, w)
		}
	}
	return &loadSessionResponse{ConfigOptions: s.configOptions(sess), Modes: pickers.ModesOf(mode), Meta: withWarnings(warnings)}
}

// setMode handles session/set_mode: the same modes as the mode option.
func (s *Server) setMode(_ context.Context, _ *request[setSessionModeResponse], p *setSessionModeRequest) (*setSessionModeResponse, error) {
	sess, err := s.session(*p.SessionID)
	if err != nil {
		return nil, err
	}
	if _, err := s.setOption(sess, optionMode, *p.ModeID); err != nil {
		return nil, err
	}
	// A client that shows config options learns of the change here.
	s.notifyOptions(sess)
	res := &setSessionModeResponse{}
	if w := s.load.saveSession(sess, nil); w != "" {
		res.Meta = withWarnings([]string{w})
		s.noticeSession(sess, []string{w})
	}
	return res, nil
}

// notifyOptions sends config_option_update: the options changed by
// another route than set_config_option.
func (s *Server) notifyOptions(sess *session) {
	s.writeUpdate(sess.id, jsonrpc.AppendJSON(nil, configOptionUpdate{SessionUpdate: "config_option_update", ConfigOptions: s.configOptions(sess)}))
}

// notifyMode sends current_mode_update: the mode changed by another route
// than session/set_mode.
func (s *Server) notifyMode(sess *session) {
	sess.mu.Lock()
	mode := sess.mode
	sess.mu.Unlock()
	s.writeUpdate(sess.id, jsonrpc.AppendJSON(nil, currentModeUpdate{SessionUpdate: "current_mode_update", CurrentModeID: mode}))
}

// bindMode lets the session's mode answer permission requests: in
// auto-edit, edits inside the workspace are allowed without asking.
func bindMode(sess *session) {
	if w, ok := sess.ws.(*editor.Workspace); ok {
		w.AutoApprove = func(req engine.PermissionRequest) bool {
			return pickers.AutoApproves(sess.picks().Mode, req, w.Roots())
		}
	}
}
