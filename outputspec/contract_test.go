package outputspec

import (
	"context"
	"encoding/json"

	"github.com/coda-acp/coda/validators"
)

// What only the tests use: the contract's checks and texts for ToolWays,
// and a schema compiled with coda's default options.

func compileSchema(src []byte) (*validators.Schema, error) {
	return validators.CompileSchemaWith(src, validators.SchemaOptions{})
}

// Check runs the ordered checks of DESIGN.md §4 on a submission: arguments,
// size, well-formedness, JSON Schema, validator, artifacts. The first
// failure refuses the submission, its Feedback written for the model.
// A Desk adds the memory of refused answers that a stage visit needs.
func (c *Contract) Check(ctx context.Context, sub Submission) Verdict {
	a, v, settled := c.admit(sub)
	if !settled {
		v, _ = c.check(ctx, sub, a)
	}
	return v
}

// parseArgs is parseArgsAs for a string content.
func parseArgs(raw json.RawMessage) (args, string) { return parseArgsAs(raw, contentRule{}) }

// ToolDescription is the submit_output tool's description, for ToolWays.
func (c *Contract) ToolDescription() string { return c.ToolDescriptionFor(ToolWays) }

// SystemPrompt is the section added to the system prompt of a stage that
// owes the answer, for ToolWays. It claims authority over presentation
// only.
func (c *Contract) SystemPrompt() string { return c.SystemPromptFor(ToolWays) }

// ToolSchema is the JSON Schema of submit_output's arguments, for
// ToolWays: `content`, a string, required; `artifacts`, an array of paths
// or {name, path, type}. check.go's parseArgs enforces exactly this, with
// messages written for the model; shape.go writes it (toolSchemaOf).
func (c *Contract) ToolSchema() json.RawMessage { return c.ToolSchemaFor(ToolWays) }

// StringTop reports whether the answer's schema names a string at its top:
// a string content is then the answer's value itself.
func (c *Contract) StringTop() bool { return c.shape.stringTop }
