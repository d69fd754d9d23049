package outputspec

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/coda-acp/coda/validators"
)

// What the model is told (DESIGN.md §3): the format's label and what its
// check enforces, the instructions, the example, the schema when one is in
// effect and the declared artifacts, in the submit_output tool description
// and, for a stage that owes the answer, in its system prompt. Golden files
// in testdata/ show the exact text.

// formatLine names the format and its rule: "JSON (`json`): exactly one ...".
func (c *Contract) formatLine() string {
	f, ok := validators.Lookup(c.format)
	switch {
	case !ok:
		return fmt.Sprintf("%q. coda has no built-in check for this label: follow what it names", c.format)
	case f.Rule != "":
		return fmt.Sprintf("%s (`%s`): %s", f.Name, c.format, f.Rule)
	}
	return fmt.Sprintf("%s (`%s`)", f.Name, c.format)
}

// Ways are how a stage visit may hand in its answer (DESIGN §15); they
// decide what the model is told. The zero value offers nothing: use
// ToolWays for the submit_output tool alone.
type Ways struct {
	// Tool: the model calls tools, and submit_output is offered.
	Tool bool
	// Reply: a reply with the answer alone is checked as the answer.
	Reply bool
	// Unavailable: submit_output may declare the answer unavailable
	// (needs Tool).
	Unavailable bool
}

// ToolWays is the submit_output tool alone.
var ToolWays = Ways{Tool: true}

// ToolDescriptionFor is the submit_output tool's description when the
// stage offers w.
func (c *Contract) ToolDescriptionFor(w Ways) string { return c.ToolDescriptionShaped(w, ToolShape{}) }

// ToolDescriptionShaped is ToolDescriptionFor for submit_output shaped as
// s: a typed content is said to be the answer's JSON value.
func (c *Contract) ToolDescriptionShaped(w Ways, s ToolShape) string {
	var b strings.Builder
	b.WriteString("Submit the final answer. Call it when the answer is ready. A refused answer comes back with the reasons: fix them and call again; a later accepted answer replaces an earlier one.\n\n")
	fmt.Fprintf(&b, "Format: %s.", c.formatLine())
	c.writeSpec(&b)
	if s.Typed && c.Typed() {
		b.WriteString("\n\n`content` is the answer itself, as a JSON value written in the arguments (not a string holding it), and nothing else.")
	} else {
		b.WriteString("\n\n`content` is the answer itself and nothing else: no code fence around it, no preamble, no closing remarks.")
	}
	b.WriteString("\n\n" + c.Protocol(w))
	return b.String()
}

// replyIsAnswer warns a model that calls tools that any reply is checked
// as its answer (DESIGN §15).
const replyIsAnswer = "A reply without a tool call ends your turn and is checked as the answer: while you are still working, call tools, and do not reply with a plan or a progress note."

// The answer's protocol (DESIGN §19): what an answer may do with what was
// found, and what it must not; what to do where a value was not found, and
// where the answer as asked cannot be produced. The one home of its
// wording: every answering stage is told it (SystemPromptFor, and
// submit_output's description), however it hands its answer in.
const (
	protocolLine = "Every fact and value in the answer comes from what was found: the task, the files and tool results, the earlier stages' work. You may select, clean up, deduplicate, reorder, split and restructure what was found; never invent, guess or complete a value."
	// unavailableLine tells the model how to say that it cannot answer.
	unavailableLine = "If the answer as asked cannot be produced from what you have (a file that does not exist, a question the data does not cover), call submit_output with `unavailable` set to the reason instead of `content`."
)

// Protocol is the answer's protocol for a stage that offers w: what the
// answer is built from, what to do where a value was not found (as the
// format can say so), and, where w offers it, how to declare the answer
// unavailable.
func (c *Contract) Protocol(w Ways) string {
	p := protocolLine + " " + c.missingLine()
	if w.Tool && w.Unavailable {
		p += "\n\n" + unavailableLine
	}
	return p
}

// missingLine says what the answer does where a value was not found, in
// the terms of its format: json and yaml have null (where a schema is in
// effect, only where it allows null); toml has none; csv leaves the field
// empty; xml leaves the element or attribute out.
func (c *Contract) missingLine() string {
	switch c.format {
	case "json", "yaml":
		if c.schemaText != "" {
			return "Where a value was not found, leave it out, or use null where the schema allows it."
		}
		return "Where a value was not found, leave it out or use null."
	case "csv":
		return "Where a value was not found, leave its field empty."
	case "xml":
		return "Where a value was not found, leave its element or attribute out."
	}
	return "Where a value was not found, leave it out."
}

// SystemPromptFor is the section added to the system prompt of a stage
// that owes the answer and offers w: it says each way the answer may be
// handed in. It claims authority over presentation only.
func (c *Contract) SystemPromptFor(w Ways) string {
	var b strings.Builder
	b.WriteString("## The answer\n\n")
	switch {
	case w.Tool && w.Reply:
		// A model that calls tools may not expect its reply to be taken:
		// say so, lest a plan or progress note become the answer.
		b.WriteString("This stage owes the final answer. When it is ready, hand it in: call submit_output with it, or reply with the answer alone, nothing before or after it. " + replyIsAnswer)
	case w.Reply:
		b.WriteString("This stage owes the final answer. When it is ready, reply with the answer alone: nothing before or after it, no code fence around it.")
	default:
		b.WriteString("This stage owes the final answer. When it is ready, call submit_output with it.")
	}
	fmt.Fprintf(&b, " Format: %s.", c.formatLine())
	c.writeSpec(&b)
	b.WriteString("\n\n" + c.Protocol(w))
	b.WriteString("\n\nThis answer specification governs the answer's presentation: its length, its structure, what it leads with. Where the instructions above disagree with it about presentation, follow this specification. It does not change the task: do what the instructions above ask, and present the result this way.")
	return b.String()
}

func (c *Contract) writeSpec(b *strings.Builder) {
	if s := strings.TrimSpace(c.spec.Instructions); s != "" {
		fmt.Fprintf(b, "\n\nInstructions for the answer:\n%s", s)
	}
	if s := strings.Trim(c.spec.Example, "\r\n"); s != "" {
		fmt.Fprintf(b, "\n\nAn example answer, between the <example> tags (the tags are not part of it):\n<example>\n%s\n</example>", s)
	}
	if c.schemaText != "" {
		fmt.Fprintf(b, "\n\nThe answer's data must satisfy this JSON Schema:\n<schema>\n%s\n</schema>", c.schemaText)
	}
	if len(c.spec.Artifacts) > 0 {
		b.WriteString("\n\nFiles to hand back with the answer in `artifacts`, each as {\"name\", \"path\"} with the name below (the path is relative to the working directory; the file must exist when you submit):")
		for _, a := range c.spec.Artifacts {
			var attrs []string
			if a.Type != "" {
				attrs = append(attrs, a.Type)
			}
			if a.Required {
				attrs = append(attrs, "required")
			} else {
				attrs = append(attrs, "optional")
			}
			fmt.Fprintf(b, "\n- %s (%s)", a.Name, strings.Join(attrs, ", "))
			if d := strings.TrimSpace(a.Description); d != "" {
				fmt.Fprintf(b, ": %s", d)
			}
		}
	}
}

// ToolSchemaFor is the JSON Schema of submit_output's arguments for a
// stage that offers w: `content`, a string, required; `artifacts`, an
// array of paths or {name, path, type}. check.go's parseArgsAs enforces
// exactly this, with messages written for the model; shape.go writes it
// (toolSchemaOf). With w.Unavailable it has `unavailable` too, and
// `content` is optional (parseArgsAs alone says that the two exclude each other: providers refuse
// combinators at a tool schema's top level). Its content is a string; see
// ToolSchemaShaped for the others.
func (c *Contract) ToolSchemaFor(w Ways) json.RawMessage {
	return c.ToolSchemaShaped(w, ToolShape{})
}
