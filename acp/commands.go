package acp

import (
	"slices"
	"strings"
	"unicode"

	"github.com/coda-acp/coda/acp/pickers"
	"github.com/coda-acp/coda/engine/blueprint"
	"github.com/coda-acp/coda/internal/jsonrpc"
)

// Slash commands: /format, /mode and /model, offered to the client with
// available_commands_update and handled by coda itself, without a model
// call; then the agent's own ([agent.commands.NAME], blueprint.SlashCommand),
// each run as the prompt it expands to. A prompt that starts with "/" and
// names none of them is an ordinary prompt: it may be a path ("/etc/hosts
// is empty, why?"), and a model can still make sense of one it does not
// know.

// slashCommands are coda's commands (blueprint.CodaCommands), as
// available_commands_update lists them.
var slashCommands = []availableCommand{
	{Name: "format", Description: "Set the answer's format for this session: json, xml, csv, yaml, toml, markdown, text, or any label", Input: &commandInput{"LABEL"}},
	{Name: "mode", Description: "Set the mode: ask (ask before edits and shell), auto-edit (edit inside the workspace without asking), read-only (no edits, no shell)", Input: &commandInput{"ask | auto-edit | read-only"}},
	{Name: "model", Description: "Set the model for this session", Input: &commandInput{"PROVIDER:MODEL"}},
}

// availableCommands are coda's commands, then the agent's.
func availableCommands(agent *blueprint.Blueprint) []availableCommand {
	var out []availableCommand
	for _, c := range slashCommands {
		// /format only when the agent gives an answer to shape.
		if c.Name != "format" || agent.CheckAnswers() == nil {
			out = append(out, c)
		}
	}
	for _, c := range agent.AgentCommands() {
		cmd := availableCommand{Name: c.Name, Description: c.Description}
		if c.Hint != "" {
			cmd.Input = &commandInput{c.Hint}
		}
		out = append(out, cmd)
	}
	return out
}

// agentCommand is the prompt a prompt that runs one of the agent's
// commands expands to: one text block, "/NAME" then what follows it.
func agentCommand(agent *blueprint.Blueprint, blocks []contentBlock) (string, bool) {
	name, arg, ok := splitCommand(blocks)
	if !ok {
		return "", false
	}
	c := agent.Agent.Commands[name]
	if c == nil {
		return "", false
	}
	return c.Expand(arg), true
}

// announce tells the client the session's commands, and the title of a
// restored session that has one: after session/new's answer, once the
// client knows the session's id; before a load's or a resume's answer
// (after a load's replay), which end what those send. The warnings of
// that answer's meta are noticed first.
func (s *Server) announce(sess *session, meta *warningsMeta) func() {
	return func() {
		if meta != nil {
			s.noticeSession(sess, meta.Coda.Warnings)
		}
		s.writeUpdate(sess.id, jsonrpc.AppendJSON(nil, availableCommandsUpdate{SessionUpdate: "available_commands_update", AvailableCommands: availableCommands(s.opts.Agent)}))
		sess.mu.Lock()
		title := sess.title
		sess.announced = true
		sess.mu.Unlock()
		if title != "" {
			s.writeUpdate(sess.id, titleUpdate(title))
		}
		// The providers' models, if they arrived after the answer was made.
		s.sendListed(sess)
	}
}

// parseCommand reads a prompt that is one of coda's slash commands: one
// text block, "/NAME" then its argument.
func parseCommand(blocks []contentBlock) (name, arg string, ok bool) {
	name, arg, ok = splitCommand(blocks)
	if !ok || !slices.Contains(blueprint.CodaCommands, name) {
		return "", "", false
	}
	return name, strings.TrimSpace(arg), true
}

// splitCommand reads a prompt that may be a slash command: one text block,
// "/NAME" then what follows it.
func splitCommand(blocks []contentBlock) (name, arg string, ok bool) {
	if len(blocks) != 1 || blocks[0].Type != "text" {
		return "", "", false
	}
	text, ok := strings.CutPrefix(strings.TrimSpace(blocks[0].Text), "/")
	if !ok {
		return "", "", false
	}
	name, arg, _ = strings.Cut(text, " ")
	if i := strings.IndexFunc(name, unicode.IsSpace); i >= 0 {
		name, arg = name[:i], text[i:]
	}
	return name, arg, name != ""
}

// commandOptions are the options coda's commands set, by command.
var commandOptions = map[string]string{"format": optionFormat, "mode": optionMode, "model": optionModel}

// runCommand answers a slash command: the option set (and the client told,
// config_option_update, and current_mode_update for the mode), a one-line
// confirmation as an agent_message_chunk, then the prompt's answer,
// end_turn. A value coda cannot take is said in the confirmation's place:
// the user typed it in the conversation, so the answer goes there.
func (s *Server) runCommand(sess *session, name, arg string) *promptResponse {
	ids := commandOptions
	var text string
	var warnings []string
	switch err := s.out.Shapes("/format"); {
	case name == "format" && err != nil:
		text = strings.TrimPrefix(err.Error(), ErrInvalidParams.Error()+": ")
	case arg == "":
		text = pickers.Describe(s.configOptions(sess), ids[name])
	default:
		var err error
		if warnings, err = s.setOption(sess, ids[name], arg); err != nil {
			text = strings.TrimPrefix(err.Error(), ErrInvalidParams.Error()+": ")
			break
		}
		s.notifyOptions(sess)
		if name == "mode" {
			s.notifyMode(sess)
		}
		if w := s.load.saveSession(sess, nil); w != "" {
			warnings = append(warnings, w)
		}
		text = pickers.Describe(s.configOptions(sess), ids[name])
	}
	b := append([]byte(nil), `{"sessionUpdate":"agent_message_chunk","messageId":`...)
	b = jsonrpc.AppendString(b, s.opts.Engine.NewID("m"))
	b = append(b, `,"content":{"type":"text","text":`...)
	b = jsonrpc.AppendString(b, text)
	b = append(b, `},"_meta":{"coda":{"phase":"command","command":`...)
	b = jsonrpc.AppendString(b, name)
	b = append(b, "}}}"...)
	s.writeUpdate(sess.id, b)
	return &promptResponse{StopReason: "end_turn", Meta: codaMeta[promptOutcome]{Coda: promptOutcome{
		Status: "command", Command: name, Warnings: nonNilStrings(warnings),
	}}}
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
