package pickers

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/coda-acp/coda/engine/llm"
)

// The effort option (DESIGN §16): the reasoning effort of the stages that
// take the user's model, category thought_level, beside the model option.
// It offers the levels the session's model takes (the catalog's Efforts)
// and shows the launch's level until the session picks one; a level the
// model cannot take is refused, naming those it takes. Picking another
// model keeps the session's level where the model takes it, else moves it
// to the nearest it takes and says so. The pick is kept with the
// session's other option values (acp/store.go) and reaches each turn as
// engine.Turn.UserEffort, which the engine sends where the stage takes the
// user's model (engine/effort.go).

// EffortDefault is the effort option's value when neither the launch nor
// the session names a level: the model's own default.
const EffortDefault = "default"

// effortNames are the levels as a picker shows them.
var effortNames = map[string]string{
	llm.EffortOff: "Off", llm.EffortMinimal: "Minimal", llm.EffortLow: "Low", llm.EffortMedium: "Medium",
	llm.EffortHigh: "High", llm.EffortXHigh: "Extra high", llm.EffortMax: "Max",
}

// doesNotReason reports whether takes is a model's that does not reason:
// it takes no effort but off.
func doesNotReason(takes []string) bool { return len(takes) == 1 && takes[0] == llm.EffortOff }

// EffortOption is the effort option for model, which takes takes (launch
// is the level it is given unpicked), with the session's picked level
// ("" is the launch's).
func EffortOption(model string, takes []string, launch, picked string) Option {
	opt := Option{
		ID: OptionEffort, Name: "Effort", Category: "thought_level", Type: "select",
		Description: "How hard the model reasons, for stages that take the user's model: the levels " + model + " takes",
	}
	switch {
	case doesNotReason(takes):
		opt.CurrentValue = llm.EffortOff
	case launch == "":
		opt.Options = append(opt.Options, Choice{Value: EffortDefault, Name: "Default (the model's own)"})
		opt.CurrentValue = cmp.Or(picked, EffortDefault)
	default:
		opt.CurrentValue = cmp.Or(picked, launch)
	}
	for _, level := range takes {
		opt.Options = append(opt.Options, Choice{Value: level, Name: cmp.Or(effortNames[level], level)})
	}
	if !slices.ContainsFunc(opt.Options, func(o Choice) bool { return o.Value == opt.CurrentValue }) {
		opt.Options = append(opt.Options, Choice{Value: opt.CurrentValue, Name: cmp.Or(effortNames[opt.CurrentValue], opt.CurrentValue)})
	}
	return opt
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

// pickEffort is the level a session keeps when it picks level for model:
// "" for the launch's (or default); an error for one the model cannot
// take.
func pickEffort(model string, takes []string, launch, level string) (string, error) {
	switch {
	case level == EffortDefault || level == launch:
		return "", nil
	case !slices.Contains(takes, level):
		return "", fmt.Errorf("effort %q: %s", level, takesLine(model, takes, launch))
	}
	return level, nil
}

// clampEffort keeps a picked level within what model takes: the nearest
// it takes, said in the warning; none when the level stands.
func clampEffort(model string, takes []string, launch, picked string) (level, warning string) {
	if slices.Contains(takes, picked) {
		return picked, ""
	}
	level = llm.NearestEffort(picked, takes)
	warning = fmt.Sprintf("effort %s: %s, so the session's effort is now %s", picked, takesLine(model, takes, launch), level)
	if level == launch {
		level = ""
	}
	return level, warning
}
