package blueprint

import (
	"regexp"
	"slices"
	"strings"
)

// A SlashCommand is one [agent.commands.NAME]: a slash command the agent
// offers an editor as /NAME. Run, it is a prompt: Prompt, with what the
// user typed after the command in place of $ARGUMENTS, or after it on a
// paragraph of its own when the prompt does not say where.
//
//	[agent.commands.review]
//	description = "Review the uncommitted change, or what you name"
//	hint = "what to review (optional)"
//	prompt = "Review the uncommitted change in the working tree."
type SlashCommand struct {
	Name        string `toml:"-"`
	Description string `toml:"description"`
	// Hint says what may follow the command, for the editor's input; ""
	// when nothing does.
	Hint   string `toml:"hint"`
	Prompt string `toml:"prompt"`
}

// CodaCommands are the slash commands coda handles itself (acp): an agent's
// commands cannot take their names.
var CodaCommands = []string{"format", "mode", "model"}

// commandName is what a command may be called: what an editor lets a user
// type after "/".
var commandName = regexp.MustCompile(`^[a-z][a-z0-9_-]*$`)

// Expand is the prompt the command gives, with arg (what followed it).
func (c *SlashCommand) Expand(arg string) string {
	arg = strings.TrimSpace(arg)
	if strings.Contains(c.Prompt, "$ARGUMENTS") {
		return strings.TrimSpace(strings.ReplaceAll(c.Prompt, "$ARGUMENTS", arg))
	}
	if arg == "" {
		return c.Prompt
	}
	return strings.TrimRight(c.Prompt, "\n") + "\n\n" + arg
}

// AgentCommands are the agent's commands, by name.
func (b *Blueprint) AgentCommands() []*SlashCommand {
	names := make([]string, 0, len(b.Agent.Commands))
	for name := range b.Agent.Commands {
		names = append(names, name)
	}
	slices.Sort(names)
	out := make([]*SlashCommand, len(names))
	for i, name := range names {
		out[i] = b.Agent.Commands[name]
	}
	return out
}

// checkCommands names the problems of [agent.commands], and gives each
// command its name.
func checkCommands(fs *findings, b *Blueprint) {
	for name, c := range b.Agent.Commands {
		key := "agent.commands." + name
		c.Name = name
		switch {
		case !commandName.MatchString(name):
			fs.add(SeverityError, CodeBadValue, key, "%q cannot be typed as a slash command: use lower-case letters, digits, '-' and '_', starting with a letter", name)
		case slices.Contains(CodaCommands, name):
			fs.add(SeverityError, CodeBadValue, key, "/%s is coda's own command: name this one otherwise", name)
		}
		if strings.TrimSpace(c.Description) == "" {
			fs.add(SeverityError, CodeBadValue, key+".description", "a command needs a description: the editor shows it beside /%s", name)
		}
		if strings.TrimSpace(c.Prompt) == "" {
			fs.add(SeverityError, CodeBadValue, key+".prompt", "a command needs a prompt: what the turn is asked when /%s is run", name)
		}
	}
}
