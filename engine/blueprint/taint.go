package blueprint

import (
	"slices"

	"github.com/coda-acp/coda/internal/glob"
)

// TaintConfig is [agent.taint]: the agent's taint gate settings. The gate
// (engine/taint) reads it as a taint.Config, the same shape, and combines
// it with the launch's: a blueprint can tighten the user's settings but
// never loosen them.
type TaintConfig struct {
	Policy  string   `toml:"policy"`
	Private []string `toml:"private"`
}

// taintPolicies are the policies [agent.taint] may name: engine/taint's
// (taint.CheckPolicy takes the same; the engine's tests hold the two
// together).
var taintPolicies = []string{"off", "allow", "deny", "ask"}

// checkTaint reports what loading refuses in [agent.taint]: a policy that
// is not one, a private path that is not a glob.
func checkTaint(fs *findings, c *TaintConfig) {
	if c == nil {
		return
	}
	if c.Policy != "" && !slices.Contains(taintPolicies, c.Policy) {
		fs.add(SeverityError, CodeBadValue, "agent.taint.policy", "%q is not a taint policy: want \"off\", \"allow\", \"deny\" or \"ask\"", c.Policy)
	}
	for _, pat := range c.Private {
		if _, err := glob.Compile(pat); err != nil {
			fs.add(SeverityError, CodeBadValue, "agent.taint.private", "%v", err)
			break
		}
	}
}
