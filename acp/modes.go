package acp

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/coda-acp/coda/acp/editor"
	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/taint"
	"github.com/coda-acp/coda/internal/jsonrpc"
	"github.com/coda-acp/coda/internal/rootfs"
	"github.com/coda-acp/coda/validators"
)

// The editor's pickers: a session's config options output_format, model,
// effort and mode, the same modes for the older session/set_mode, and what
// a mode does to a turn.

// The config option ids.
const (
	optionFormat = "output_format"
	optionModel  = "model"
	optionEffort = "effort"
	optionMode   = "mode"
)

// The modes.
const (
	modeAsk      = "ask"
	modeAutoEdit = "auto-edit"
	modeReadOnly = "read-only"
)

// sessionModes are the modes, in the order a picker shows them.
var sessionModes = []struct{ id, name, description string }{
	{modeAsk, "Ask", "Ask before every edit and shell command"},
	{modeAutoEdit, "Auto-edit", "Edit files inside the workspace without asking; shell commands still ask"},
	{modeReadOnly, "Read-only", "Read and search only: no file changes, no shell"},
}

func knownMode(id string) bool {
	return slices.ContainsFunc(sessionModes, func(m struct{ id, name, description string }) bool { return m.id == id })
}

// modeNames lists the modes for messages: "ask, auto-edit, read-only".
func modeNames() string {
	names := make([]string, len(sessionModes))
	for i, m := range sessionModes {
		names[i] = m.id
	}
	return strings.Join(names, ", ")
}

// optionExample is a value the option takes, for error messages.
func optionExample(id string) string {
	switch id {
	case optionModel:
		return "anthropic:claude-sonnet-5-5" // cmd/coda's default for anthropic (defaultModels)
	case optionMode:
		return modeAsk
	case optionEffort:
		return llm.EffortHigh
	}
	return "json"
}

// setOption sets one of the session's options, as set_config_option and
// the slash commands do; it returns the warnings the change gives (formats
// retiring a blueprint's checks). A session's options change one message
// at a time, on the read loop or in the session's order off it (order.go),
// so compiling from its levels and then storing cannot interleave with
// another change.
func (s *Server) setOption(sess *session, id, value string) ([]string, error) {
	switch id {
	case optionFormat:
		if err := s.shapes(optionFormat); err != nil {
			return nil, err
		}
		config := validators.Canonical(value)
		outs, err := s.sessionOutputs(sess.meta, config)
		if err != nil {
			return nil, err
		}
		sess.mu.Lock()
		sess.config, sess.outputs = config, outs
		sess.mu.Unlock()
		return outs.Warnings, nil
	case optionModel:
		if err := s.checkModel(value); err != nil {
			return nil, err
		}
		// Picking the launch's model is going back to it: stages that pin
		// their own models keep them.
		if value == s.launchModel() {
			value = ""
		}
		sess.mu.Lock()
		sess.model = value
		sess.mu.Unlock()
		return s.clampEffort(sess), nil
	case optionEffort:
		if s.opts.Efforts == nil {
			break
		}
		return nil, s.setEffort(sess, value)
	case optionMode:
		if !knownMode(value) {
			return nil, fmt.Errorf("%w: coda has no mode %q (it has %s)", ErrInvalidParams, value, modeNames())
		}
		sess.mu.Lock()
		sess.mode = value
		sess.mu.Unlock()
		return nil, nil
	}
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

// checkModel refuses a model spec coda cannot use at all (not
// PROVIDER:MODEL, an unknown provider). One whose key is missing is taken:
// the prompt then says what to set.
func (s *Server) checkModel(spec string) error {
	provider, model, ok := strings.Cut(spec, ":")
	if !ok || provider == "" || model == "" {
		return fmt.Errorf("%w: model %q: want PROVIDER:MODEL, e.g. %s", ErrInvalidParams, spec, optionExample(optionModel))
	}
	if provider == "script" {
		// A script model replays a file coda reads: a client may pick one
		// only when coda was launched with one (tests and the demo), never
		// to have coda read a file of its naming otherwise; [picker] does
		// not change that.
		if !strings.HasPrefix(s.launchModel(), "script:") {
			return fmt.Errorf("%w: model %q: script models are for tests, and only when coda was launched with one (--model script:FILE)", ErrInvalidParams, spec)
		}
		cwd, _ := os.Getwd() // where the model's file is opened from
		if name, private := s.privateFile(model, cwd); private {
			return fmt.Errorf("%w: model %q: %s is a private file (the taint gate's private paths), so coda does not read it", ErrInvalidParams, spec, name)
		}
	}
	if s.opts.CheckModel == nil {
		return nil
	}
	if err := s.opts.CheckModel(spec); err != nil && !errors.Is(err, ErrAuthRequired) {
		return fmt.Errorf("%w: %v", ErrInvalidParams, err)
	}
	return nil
}

// launchModel is the model a session uses until it picks one: --model,
// else the default model (configured, or found).
func (s *Server) launchModel() string {
	return cmp.Or(s.opts.UserModel, s.defaultModel(false))
}

// userModel is the model a session's turns take as the user's.
func (s *Server) userModel(sess *session) string {
	return cmp.Or(sess.model, s.opts.UserModel)
}

// configOptions are the session's options, as the client shows them.
func (s *Server) configOptions(sess *session) []configOption {
	sess.mu.Lock()
	outs, model, effort, mode := sess.outputs, sess.model, sess.effort, sess.mode
	sess.mu.Unlock()
	var opts []configOption
	if s.shapes("") == nil { // an agent that gives no answer has no format to pick
		opts = append(opts, s.formatOption(outs))
	}
	if m, ok := s.modelOption(model); ok {
		opts = append(opts, m)
		if e, ok := s.effortOption(m.CurrentValue, effort); ok {
			opts = append(opts, e)
		}
	}
	return append(opts, modeOption(mode))
}

// modelOption is the model option: the launch's model, then config.toml's
// [picker] models, then the models the providers list (listed.go), then
// the session's own pick when it is none of those.
// Without any model there is nothing to show (the auth method says what to
// set; /model still sets one).
func (s *Server) modelOption(picked string) (configOption, bool) {
	current := cmp.Or(picked, s.launchModel())
	var choices []selectOption
	add := func(spec, name string) {
		if spec != "" && !slices.ContainsFunc(choices, func(o selectOption) bool { return o.Value == spec }) {
			choices = append(choices, selectOption{spec, name})
		}
	}
	add(s.launchModel(), s.launchModel())
	scripted := strings.HasPrefix(s.launchModel(), "script:")
	for _, m := range s.opts.PickerModels {
		if scripted || !strings.HasPrefix(m, "script:") { // not offered where it is refused (checkModel)
			add(m, m)
		}
	}
	listed, _ := s.listed()
	for _, m := range listed {
		add(m.Spec, m.Name)
	}
	add(current, current)
	if current == "" {
		return configOption{}, false
	}
	return configOption{
		ID: optionModel, Name: "Model", Category: "model", Type: "select",
		Description:  "The model for stages that take the user's model (PROVIDER:MODEL)",
		CurrentValue: current, Options: choices,
	}, true
}

func modeOption(mode string) configOption {
	opt := configOption{
		ID: optionMode, Name: "Mode", Category: "mode", Type: "select",
		Description:  "ask: ask before edits and shell; auto-edit: edit inside the workspace without asking; read-only: no edits, no shell",
		CurrentValue: mode,
	}
	for _, m := range sessionModes {
		opt.Options = append(opt.Options, selectOption{m.id, m.name})
	}
	return opt
}

// modesOf is the session's modes as session/set_mode clients read them.
func modesOf(mode string) modeState {
	modes := make([]sessionMode, len(sessionModes))
	for i, m := range sessionModes {
		modes[i] = sessionMode{ID: m.id, Name: m.name, Description: m.description}
	}
	return modeState{CurrentModeID: mode, AvailableModes: modes}
}

// sessionResponse is what session/new, load and resume answer besides
// the id: the options, the modes, and the warnings (more, those not "").
func (s *Server) sessionResponse(sess *session, more ...string) *loadSessionResponse {
	s.startListing()
	_, listed := s.listed() // before the options are made: they have it
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
	return &loadSessionResponse{ConfigOptions: s.configOptions(sess), Modes: modesOf(mode), Meta: withWarnings(warnings)}
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
	if w := s.saveSession(sess, nil); w != "" {
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
func (s *Server) bindMode(sess *session) {
	if w, ok := sess.ws.(*editor.Workspace); ok {
		w.AutoApprove = func(req engine.PermissionRequest) bool {
			sess.mu.Lock()
			mode := sess.mode
			sess.mu.Unlock()
			// The taint gate's questions are never the mode's to answer.
			return mode == modeAutoEdit && req.ToolCall.Kind == "edit" && !strings.HasPrefix(req.Key, taint.PermissionPrefix) &&
				inside(w.Roots(), req.ToolCall.Locations)
		}
	}
}

// inside reports whether every location lies under one of roots (and
// there is at least one): an edit whose place is unknown still asks. The
// roots are absolute, so a relative location lies under none.
func inside(roots []string, locs []engine.Location) bool {
	if len(locs) == 0 {
		return false
	}
	for _, l := range locs {
		if !slices.ContainsFunc(roots, func(root string) bool { return rootfs.Within(root, l.Path) }) {
			return false
		}
	}
	return true
}

// withhold is what a mode holds back from a turn: read-only offers only
// the tools that look (read, search, think, fetch), so nothing is changed
// and nothing runs.
func withhold(mode string) func(engine.Tool) bool {
	if mode != modeReadOnly {
		return nil
	}
	return func(t engine.Tool) bool {
		switch t.Kind() {
		case "read", "search", "think", "fetch":
			return false
		}
		return true
	}
}
