package pickers

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
)

// Catalog is what a Picker asks of the models (acp.Models is one).
type Catalog interface {
	Default(wait bool) string
	Picker() []string
	Efforts(spec string) (takes []string, launch string)
	Discovers() bool
	Discover(ctx context.Context) []Listed
}

// Picks are a session's picks: its model and effort ("" is the
// launch's) and its mode.
type Picks struct{ Model, Effort, Mode string }

// A Picker answers a server's sessions' pickers: what each shows, what a
// pick stores, what it refuses. Its state is the launch's models and the
// providers' list; each session's picks are the caller's.
type Picker struct {
	models                Catalog
	userModel, userEffort string
	// private says whether a file a client names is one of the taint
	// gate's private files, and its name.
	private func(path, dir string) (string, bool)
	// Listing is the providers' model list, asked once a process.
	Listing *Listing
}

// New is a Picker over models: userModel and userEffort are --model and
// --effort; private says whether a file a client names is private.
func New(models Catalog, userModel, userEffort string, private func(path, dir string) (string, bool)) *Picker {
	var discover func(context.Context) []Listed
	if models.Discovers() {
		discover = models.Discover
	}
	return &Picker{models: models, userModel: userModel, userEffort: userEffort, private: private, Listing: NewListing(discover)}
}

// Default is the model for stages that name none; with wait false it
// does not wait for a search still under way.
func (p *Picker) Default(wait bool) string { return p.models.Default(wait) }

// LaunchModel is the model a session uses until it picks one: --model,
// else the default model (configured, or found).
func (p *Picker) LaunchModel() string { return cmp.Or(p.userModel, p.models.Default(false)) }

// UserModel is the model a session's turns take as the user's.
func (p *Picker) UserModel(picks Picks) string { return cmp.Or(picks.Model, p.userModel) }

// UserEffort is the effort a session's turns take as the user's: its
// pick, else --effort.
func (p *Picker) UserEffort(picks Picks) string { return cmp.Or(picks.Effort, p.userEffort) }

// Model is the model the session's option shows: its pick, else the
// launch's.
func (p *Picker) Model(picks Picks) string { return cmp.Or(picks.Model, p.LaunchModel()) }

// scripted reports whether coda was launched with a script model.
func (p *Picker) scripted() bool { return strings.HasPrefix(p.LaunchModel(), "script:") }

// CheckSpec refuses a model spec coda cannot use at all for its shape:
// not PROVIDER:MODEL, or a script model where none may be picked. The
// catalog's own check (an unknown provider) is the caller's.
func (p *Picker) CheckSpec(spec string) error {
	provider, model, ok := strings.Cut(spec, ":")
	if !ok || provider == "" || model == "" {
		return fmt.Errorf("model %q: want PROVIDER:MODEL, e.g. %s", spec, OptionExample(OptionModel))
	}
	if provider != "script" {
		return nil
	}
	// A script model replays a file coda reads: a client may pick one
	// only when coda was launched with one (tests and the demo), never to
	// have coda read a file of its naming otherwise; [picker] does not
	// change that.
	if !p.scripted() {
		return fmt.Errorf("model %q: script models are for tests, and only when coda was launched with one (--model script:FILE)", spec)
	}
	cwd, _ := os.Getwd() // where the model's file is opened from
	if name, private := p.private(model, cwd); private {
		return fmt.Errorf("model %q: %s is a private file (the taint gate's private paths), so coda does not read it", spec, name)
	}
	return nil
}

// ReadsModelFile reports whether picking the model value reads a file: a
// script: model's, when the launch's model is one (the only case a client
// may pick one).
func (p *Picker) ReadsModelFile(value string) bool {
	return strings.HasPrefix(value, "script:") && p.scripted()
}

// PickModel is picks with the model value (checked) picked: picking the
// launch's model is going back to it, so that stages that pin their own
// models keep them; the effort is kept within what the model takes, with
// a warning when it moves.
func (p *Picker) PickModel(picks Picks, value string) (Picks, []string) {
	if value == p.LaunchModel() {
		value = ""
	}
	picks.Model = value
	model := p.Model(picks)
	if picks.Effort == "" || model == "" {
		return picks, nil
	}
	takes, launch := p.models.Efforts(model)
	if takes == nil {
		return picks, nil
	}
	var warning string
	if picks.Effort, warning = clampEffort(model, takes, launch, picks.Effort); warning != "" {
		return picks, []string{warning}
	}
	return picks, nil
}

// HasEffort reports whether the session has an effort option: its model
// takes levels.
func (p *Picker) HasEffort(picks Picks) bool {
	takes, _ := p.models.Efforts(p.Model(picks))
	return takes != nil
}

// PickEffort is picks with the effort level picked, refusing one its model
// cannot take; the launch's level (or default) goes back to it.
func (p *Picker) PickEffort(picks Picks, level string) (Picks, error) {
	model := p.Model(picks)
	if model == "" {
		return picks, fmt.Errorf("effort: no model is set: pick one first (the model option, or /model PROVIDER:MODEL)")
	}
	takes, launch := p.models.Efforts(model)
	level, err := pickEffort(model, takes, launch, level)
	if err != nil {
		return picks, err
	}
	picks.Effort = level
	return picks, nil
}

// PickMode is picks with the mode picked, refusing one coda has not.
func PickMode(picks Picks, mode string) (Picks, error) {
	if !KnownMode(mode) {
		return picks, fmt.Errorf("coda has no mode %q (it has %s)", mode, ModeNames())
	}
	picks.Mode = mode
	return picks, nil
}

// Options are the session's model, effort and mode options, as the
// client shows them after output_format.
func (p *Picker) Options(picks Picks) []Option {
	var opts []Option
	if m, ok := p.modelOption(picks.Model); ok {
		opts = append(opts, m)
		if takes, launch := p.models.Efforts(m.CurrentValue); takes != nil {
			opts = append(opts, EffortOption(m.CurrentValue, takes, launch, picks.Effort))
		}
	}
	return append(opts, ModeOption(picks.Mode))
}

// modelOption is the model option: the launch's model, then config.toml's
// [picker] models, then the models the providers list, then the
// session's own pick when it is none of those. Without any model there is
// nothing to show (the auth method says what to set; /model still sets
// one).
func (p *Picker) modelOption(picked string) (Option, bool) {
	launch := p.LaunchModel()
	current := cmp.Or(picked, launch)
	var choices []Choice
	add := func(spec, name string) {
		if spec != "" && !slices.ContainsFunc(choices, func(o Choice) bool { return o.Value == spec }) {
			choices = append(choices, Choice{Value: spec, Name: name})
		}
	}
	add(launch, launch)
	scripted := strings.HasPrefix(launch, "script:")
	for _, m := range p.models.Picker() {
		if scripted || !strings.HasPrefix(m, "script:") { // not offered where it is refused (CheckSpec)
			add(m, m)
		}
	}
	listed, _ := p.Listing.Listed()
	for _, m := range listed {
		add(m.Spec, m.Name)
	}
	add(current, current)
	if current == "" {
		return Option{}, false
	}
	return Option{
		ID: OptionModel, Name: "Model", Category: "model", Type: "select",
		Description:  "The model for stages that take the user's model (PROVIDER:MODEL)",
		CurrentValue: current, Options: choices,
	}, true
}

// Describe says option id's value among opts and what else it takes, in
// a line: what a slash command without its argument answers.
func Describe(opts []Option, id string) string {
	for _, o := range opts {
		if o.ID != id {
			continue
		}
		var values []string
		for _, v := range o.Options {
			values = append(values, v.Value)
		}
		switch id {
		case OptionFormat:
			return fmt.Sprintf("Answer format: %s. Choices: %s, or any label.", o.CurrentValue, strings.Join(values, ", "))
		case OptionMode:
			return fmt.Sprintf("Mode: %s. Choices: %s.", o.CurrentValue, strings.Join(values, ", "))
		}
		return fmt.Sprintf("Model: %s. Choices: %s, or any PROVIDER:MODEL.", o.CurrentValue, strings.Join(values, ", "))
	}
	return "No model is set: /model PROVIDER:MODEL sets one, e.g. /model " + OptionExample(OptionModel) + "."
}
