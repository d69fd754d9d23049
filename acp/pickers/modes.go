package pickers

import (
	"slices"
	"strings"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/taint"
	"github.com/coda-acp/coda/internal/rootfs"
)

// The modes (DESIGN §14).
const (
	ModeAsk      = "ask"
	ModeAutoEdit = "auto-edit"
	ModeReadOnly = "read-only"
)

// modes are the modes, in the order a picker shows them.
var modes = []struct{ id, name, description string }{
	{ModeAsk, "Ask", "Ask before every edit and shell command"},
	{ModeAutoEdit, "Auto-edit", "Edit files inside the workspace without asking; shell commands still ask"},
	{ModeReadOnly, "Read-only", "Read and search only: no file changes, no shell"},
}

// KnownMode reports whether coda has the mode id.
func KnownMode(id string) bool {
	return slices.ContainsFunc(modes, func(m struct{ id, name, description string }) bool { return m.id == id })
}

// ModeNames lists the modes for messages: "ask, auto-edit, read-only".
func ModeNames() string {
	names := make([]string, len(modes))
	for i, m := range modes {
		names[i] = m.id
	}
	return strings.Join(names, ", ")
}

// ModeOption is the mode option, showing mode.
func ModeOption(mode string) Option {
	opt := Option{
		ID: OptionMode, Name: "Mode", Category: "mode", Type: "select",
		Description:  "ask: ask before edits and shell; auto-edit: edit inside the workspace without asking; read-only: no edits, no shell",
		CurrentValue: mode,
	}
	for _, m := range modes {
		opt.Options = append(opt.Options, Choice{Value: m.id, Name: m.name})
	}
	return opt
}

// A ModeState is the session's modes as session/set_mode clients read
// them.
type ModeState struct {
	AvailableModes []Mode `json:"availableModes"`
	CurrentModeID  string `json:"currentModeId"`
}

// A Mode is one mode of a ModeState.
type Mode struct {
	Description string `json:"description"`
	ID          string `json:"id"`
	Name        string `json:"name"`
}

// ModesOf is the modes with mode current.
func ModesOf(mode string) ModeState {
	out := make([]Mode, len(modes))
	for i, m := range modes {
		out[i] = Mode{ID: m.id, Name: m.name, Description: m.description}
	}
	return ModeState{CurrentModeID: mode, AvailableModes: out}
}

// AutoApproves reports whether mode answers a permission request itself:
// in auto-edit, an edit inside the workspace's roots. The taint gate's
// questions are never the mode's to answer.
func AutoApproves(mode string, req engine.PermissionRequest, roots []string) bool {
	return mode == ModeAutoEdit && req.ToolCall.Kind == "edit" && !strings.HasPrefix(req.Key, taint.PermissionPrefix) &&
		Inside(roots, req.ToolCall.Locations)
}

// Inside reports whether every location lies under one of roots (and
// there is at least one): an edit whose place is unknown still asks. The
// roots are absolute, so a relative location lies under none.
func Inside(roots []string, locs []engine.Location) bool {
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

// Withhold is what a mode holds back from a turn: read-only offers only
// the tools that look (read, search, think, fetch), so nothing is changed
// and nothing runs.
func Withhold(mode string) func(engine.Tool) bool {
	if mode != ModeReadOnly {
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
