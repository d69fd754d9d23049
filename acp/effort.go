package acp

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/coda-acp/coda/engine/llm"
)

// The effort option (DESIGN §16): the reasoning effort of the stages that
// take the user's model, category thought_level, beside the model option.
// It offers the levels the session's model takes (Models.Efforts: the
// catalog's) and shows the launch's level until the session picks one; a
// level the model cannot take is refused, naming those it takes. Picking
// another model keeps the session's level where the model takes it, else
// moves it to the nearest it takes and says so. The pick is kept with the
// session's other option values (store.go) and reaches each turn as
// engine.Turn.UserEffort, which the engine sends where the stage takes the
// user's model (engine/effort.go).

// effortDefault is the effort option's value when neither the launch nor
// the session names a level: the model's own default.
const effortDefault = "default"

// effortNames are the levels as a picker shows them.
var effortNames = map[string]string{
	llm.EffortOff: "Off", llm.EffortMinimal: "Minimal", llm.EffortLow: "Low", llm.EffortMedium: "Medium",
	llm.EffortHigh: "High", llm.EffortXHigh: "Extra high", llm.EffortMax: "Max",
}

// doesNotReason reports whether takes is a model's that does not reason:
// it takes no effort but off.
func doesNotReason(takes []string) bool { return len(takes) == 1 && takes[0] == llm.EffortOff }

// effortOption is the effort option for the session's model and its
// picked level ("" is the launch's); false when Models gives the model no
// levels.
func (s *Server) effortOption(model, picked string) (configOption, bool) {
	if model == "" {
		return configOption{}, false
	}
	takes, launch := s.opts.Models.Efforts(model)
	if takes == nil {
		return configOption{}, false
	}
	opt := configOption{
		ID: optionEffort, Name: "Effort", Category: "thought_level", Type: "select",
		Description: "How hard the model reasons, for stages that take the user's model: the levels " + model + " takes",
	}
	switch {
	case doesNotReason(takes):
		opt.CurrentValue = llm.EffortOff
	case launch == "":
		opt.Options = append(opt.Options, selectOption{effortDefault, "Default (the model's own)"})
		opt.CurrentValue = cmp.Or(picked, effortDefault)
	default:
		opt.CurrentValue = cmp.Or(picked, launch)
	}
	for _, level := range takes {
		opt.Options = append(opt.Options, selectOption{level, cmp.Or(effortNames[level], level)})
	}
	if !slices.ContainsFunc(opt.Options, func(o selectOption) bool { return o.Value == opt.CurrentValue }) {
		opt.Options = append(opt.Options, selectOption{opt.CurrentValue, cmp.Or(effortNames[opt.CurrentValue], opt.CurrentValue)})
	}
	return opt, true
}

// sessionModel is the model the session's option shows: its pick, else
// the launch's.
func (s *Server) sessionModel(sess *session) string {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	return cmp.Or(sess.model, s.launchModel())
}

// setEffort sets the session's effort to level, refusing one its model
// cannot take. The launch's level (or default) goes back to it.
func (s *Server) setEffort(sess *session, level string) error {
	model := s.sessionModel(sess)
	if model == "" {
		return fmt.Errorf("%w: effort: no model is set: pick one first (the model option, or /model PROVIDER:MODEL)", ErrInvalidParams)
	}
	takes, launch := s.opts.Models.Efforts(model)
	switch {
	case level == effortDefault || level == launch:
		level = ""
	case !slices.Contains(takes, level):
		return fmt.Errorf("%w: effort %q: %s", ErrInvalidParams, level, takesLine(model, takes, launch))
	}
	sess.mu.Lock()
	sess.effort = level
	sess.mu.Unlock()
	return nil
}

// takesLine says which levels model takes, for a refusal.
func takesLine(model string, takes []string, launch string) string {
	if doesNotReason(takes) {
		return "model " + model + " does not reason: it takes no effort but off"
	}
	levels := strings.Join(takes, ", ")
	if launch == "" {
		levels += ", or default"
	}
	return "model " + model + " takes " + levels
}

// clampEffort keeps the session's picked level within what its model
// (just picked) takes: the nearest it takes, said in the warning it
// returns; none when the level stands or was never picked.
func (s *Server) clampEffort(sess *session) []string {
	model := s.sessionModel(sess)
	sess.mu.Lock()
	picked := sess.effort
	sess.mu.Unlock()
	if picked == "" || model == "" {
		return nil
	}
	takes, launch := s.opts.Models.Efforts(model)
	if takes == nil || slices.Contains(takes, picked) {
		return nil
	}
	level := llm.NearestEffort(picked, takes)
	warning := fmt.Sprintf("effort %s: %s, so the session's effort is now %s", picked, takesLine(model, takes, launch), level)
	if level == launch {
		level = ""
	}
	sess.mu.Lock()
	sess.effort = level
	sess.mu.Unlock()
	return []string{warning}
}

// userEffort is the effort a session's turns take as the user's: its
// pick, else --effort.
func (s *Server) userEffort(sess *session) string {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	return cmp.Or(sess.effort, s.opts.UserEffort)
}
