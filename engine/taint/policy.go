package taint

import (
	"fmt"
	"slices"
)

// Taint policies.
const (
	Off   = "off"
	Allow = "allow"
	Deny  = "deny"
	Ask   = "ask"
)

// PermissionPrefix starts the permission key of every question the gate
// asks ("taint:submit_output"): a workspace that answers some requests by
// itself (auto-edit) must leave these to the user.
const PermissionPrefix = "taint:"

// FlagWaived marks an answer that carried private content and went
// through because nobody could be asked and --yes waived the gate.
const FlagWaived = "taint_waived"

// Config is [taint] in config.toml (and, as the blueprint spells it,
// [agent.taint]). A key left out falls through to the next level
// (Launch.Resolve).
type Config struct {
	Policy  string   `toml:"policy"`
	Private []string `toml:"private"`
}

// CheckPolicy says why p is not a taint policy, or nil. "" is no policy
// given.
func CheckPolicy(p string) error {
	switch p {
	case "", Off, Allow, Deny, Ask:
		return nil
	}
	return fmt.Errorf("%q is not a taint policy: want \"off\", \"allow\", \"deny\" or \"ask\"", p)
}

// Launch is what the launch says of the taint gate.
type Launch struct {
	// Config is config.toml's [taint]; nil when it has none.
	Config *Config
	// Policy is --taint; "" when not given.
	Policy string
	// Unattended says nobody can be asked (`coda run`): `ask` denies,
	// unless Waive (--yes) lets the call through, recorded as a waiver.
	Unattended, Waive bool
}

// Resolve is the taint settings in effect for an agent whose blueprint
// says agent ([agent.taint]; nil when it says nothing). --taint, the
// user's own word at launch, wins. Otherwise the stricter of config.toml's
// [taint] and the blueprint's holds (off, allow, ask, deny, in that
// order), and the private paths are both lists together (each
// DefaultPrivate when it names none): a blueprint, which may come from
// anywhere, can tighten the user's settings but never loosen them.
func (l Launch) Resolve(agent *Config) Config {
	out := Config{Policy: Off}
	userPrivate := DefaultPrivate
	if l.Config != nil && l.Config.Private != nil {
		userPrivate = l.Config.Private
	}
	out.Private = append([]string(nil), userPrivate...)
	for _, c := range []*Config{l.Config, agent} {
		if c != nil && strictness(c.Policy) > strictness(out.Policy) {
			out.Policy = c.Policy
		}
	}
	if agent != nil && agent.Private != nil {
		for _, g := range agent.Private {
			if !slices.Contains(out.Private, g) {
				out.Private = append(out.Private, g)
			}
		}
	}
	if l.Policy != "" {
		out.Policy = l.Policy
	}
	return out
}

// strictness orders the policies from the most lenient ("" and off) to the
// strictest (deny).
func strictness(policy string) int {
	return slices.Index([]string{Off, Allow, Ask, Deny}, policy)
}
