package outputspec

import (
	"fmt"
	"strings"
)

// ToolDescription is the submit_output tool's description.
func (c *Contract) ToolDescription() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Submit the final answer. The answer's format is %s.", c.format)
	c.writeSpec(&b)
	b.WriteString("\nThe content must be the answer itself and nothing else: no code fence around it, no preamble.")
	return b.String()
}

// SystemPrompt is the section added to the system prompt of a stage that owes
// the answer.
func (c *Contract) SystemPrompt() string {
	var b strings.Builder
	fmt.Fprintf(&b, "## The answer\n\nWhen you are done, call submit_output with the answer as %s.", c.format)
	c.writeSpec(&b)
	b.WriteString("\nThis answer specification governs the answer's presentation (length, structure, what to lead with); where the instructions above disagree about presentation, follow this specification. It does not change what you were asked to do.")
	return b.String()
}

func (c *Contract) writeSpec(b *strings.Builder) {
	if c.spec.Instructions != "" {
		fmt.Fprintf(b, "\n\nInstructions:\n%s", c.spec.Instructions)
	}
	if c.spec.Example != "" {
		fmt.Fprintf(b, "\n\nExample:\n%s", c.spec.Example)
	}
}
