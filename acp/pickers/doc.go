// Package pickers is the editor's pickers of a session (DESIGN §14, §16):
// the config options model, effort and mode as the client shows them
// (output_format's choices are acp's, which compiles the contracts), the
// modes for the older session/set_mode and what a mode does to a turn, the
// effort levels a model takes, and the providers' model list, asked once a
// process (Listing). It knows nothing of connections or of a session's
// other state: acp keeps each session's picks (Picks) and asks a Picker
// what to show, what to store and what to refuse. Its errors are the
// user's words; acp wraps them as invalid params.
package pickers

import "github.com/coda-acp/coda/engine/llm"

// The config option ids.
const (
	OptionFormat = "output_format"
	OptionModel  = "model"
	OptionEffort = "effort"
	OptionMode   = "mode"
)

// An Option is a session config option (a select), as the wire has it.
type Option struct {
	ID           string   `json:"id"`
	Name         string   `json:"name"`
	Description  string   `json:"description,omitempty"`
	Category     string   `json:"category"`
	Type         string   `json:"type"`
	CurrentValue string   `json:"currentValue"`
	Options      []Choice `json:"options"`
}

// A Choice is one value of an Option.
type Choice struct {
	Value string `json:"value"`
	Name  string `json:"name"`
}

// OptionExample is a value the option id takes, for error messages.
func OptionExample(id string) string {
	switch id {
	case OptionModel:
		return "anthropic:claude-sonnet-5-5" // cmd/coda's default for anthropic (internal/catalog)
	case OptionMode:
		return ModeAsk
	case OptionEffort:
		return llm.EffortHigh
	}
	return "json"
}
