package engine

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/coda-acp/coda/engine/blueprint"
	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/outputspec"
)

// The answer's shape at the source (DESIGN §17). Each model call of a
// visit that takes an answer is shaped here, from the stage's output spec
// (`structured`), the provider's (ModelFact.Structured: the weaker of the
// two wins) and what the model's API takes (Shaper):
//
//   - tool: submit_output's content is typed (the answer's schema, for a
//     json answer), sent strict where that schema fits the provider's
//     strict subset exactly (outputspec/strict.go), and the answer call —
//     when nothing else is left for the visit: an output stage that offers
//     only submit_output, the call after a nudge, the last repair — names
//     submit_output as the tool to call. Where the API cannot force it
//     (Ollama; Anthropic with thinking on, or a model that refuses it) the
//     request says so in words, and asks for a native reply as well. A
//     Model that does not say what it takes (not a Shaper: the script
//     model) is asked none of this, but a typed submit_output.
//   - native: a call whose reply is taken as the answer (a model called
//     without tools, or the answer call) asks for the reply in the API's
//     native JSON output (Request.Reply), strict where the schema fits.
//   - prompted: what the model is told, and nothing more.
//
// auto is the strongest the API takes. A server that refuses a mechanism
// (a provider's *MechanismError) has the call made again without it, once
// per mechanism, with one warning; the session remembers it (ToolSupport).
// Constrained decoding is asked only for the answer call, never for the
// working turns; coda's own checks run on every answer either way.

// Ranks of structured (outputspec.StructuredRank).
const (
	rankTool   = 3
	rankNative = 2
)

// The mechanisms a server may refuse (MechanismError.Mechanism).
const (
	mechanismStrict     = "strict"
	mechanismToolChoice = "tool_choice"
	mechanismReply      = "reply_format"
)

// An answerShape is how a visit asks its model for the answer: the
// stage's contract and the ways it takes an answer, what the session
// learned its models' servers refuse, and how the last call asked. The
// visit gives it what it knows of its own state (whether the answer is
// still owed, whether the call is the last chance for it) as arguments.
type answerShape struct {
	stage    *blueprint.Stage
	contract *outputspec.Contract // nil: the stage takes no answer
	facts    func(spec string) llm.ModelFact
	support  *ToolSupport
	notes    runNotes
	shaped   shaped // how the last call asked for the answer's shape
	// toolless says the last call was made without tools (notools.go):
	// the answer is then a reply.
	toolless bool
}

// shaped is how a visit's last model call asked for the answer's shape.
type shaped struct {
	typed  bool // submit_output's content was the answer's JSON value
	strict bool // submit_output, or the reply's schema, was sent strict
	// family is the strict subset submit_output was shaped for, and
	// replyFamily the reply format's: an answer given under the schema's
	// projection is read back before it is checked (outputspec).
	family, replyFamily string
	forced              bool // the call named submit_output as the tool to call
	reply               bool // the reply was asked in the API's native JSON output
}

// rank is the strongest mechanism the visit uses with the model spec
// names: the stage's output spec's structured and the provider's, the
// weaker of the two.
func (a *answerShape) rank(spec string) int {
	rank := outputspec.StructuredRank(a.contract.Structured())
	if f := a.facts; f != nil {
		rank = min(rank, outputspec.StructuredRank(f(spec).Structured))
	}
	return rank
}

// shape shapes req, the visit's next call as m (spec) takes it, for the
// answer (see the top of this file), and notes how in a.shaped. owes says
// the visit still owes its answer; last, that the call carries a nudge or
// is the last repair.
func (a *answerShape) shape(spec string, m llm.Model, req *llm.Request, owes, last bool) {
	a.shaped = shaped{}
	req.ToolChoice, req.Reply = "", nil
	c := a.contract
	if c == nil {
		return
	}
	var sh llm.Shapes
	s, known := m.(llm.Shaper)
	if known {
		sh = s.Shapes(req)
	}
	learned := a.support
	if learned.refused(spec, mechanismStrict) {
		sh.Strict = ""
	}
	rank := a.rank(spec)
	answerCall := a.answerCall(req.Tools, owes, last)
	unforced := false
	if i := slices.IndexFunc(req.Tools, func(t llm.ToolSpec) bool { return t.Name == blueprint.ToolSubmitOutput }); i >= 0 && a.canSubmit() {
		var ts outputspec.ToolShape
		if rank >= rankTool {
			ts.Typed = c.Typed()
			if sh.Strict != "" && c.ToolStrict(sh.Strict, ts) == "" {
				ts.Strict = sh.Strict
			}
		}
		if ts != (outputspec.ToolShape{}) {
			req.Tools = slices.Clone(req.Tools)
			req.Tools[i] = a.submitSpecShaped(ts)
		}
		a.shaped.typed, a.shaped.strict, a.shaped.family = ts.Typed, ts.Strict != "", ts.Strict
		if answerCall && rank >= rankTool {
			if sh.ToolChoice && !learned.refused(spec, mechanismToolChoice) {
				req.ToolChoice = blueprint.ToolSubmitOutput
				a.shaped.forced = true
			} else if known {
				unforced = true
				// The prompt says what the API could not: only for this
				// call, so the conversation does not gather it.
				req.Messages = append(req.Messages[:len(req.Messages):len(req.Messages)],
					llm.Message{Role: llm.RoleUser, Text: "Nothing else is left to do in this stage. " + a.how("the answer") + "."})
			}
		}
		if answerCall && (rank == rankNative || unforced) {
			req.Reply = a.replyFormat(spec, sh, rank, owes)
		}
	} else if len(req.Tools) == 0 {
		req.Reply = a.replyFormat(spec, sh, rank, owes)
	}
	if req.Reply != nil {
		a.shaped.reply = true
		a.shaped.strict = a.shaped.strict || req.Reply.Strict
		if req.Reply.Strict {
			a.shaped.replyFamily = sh.Strict
		}
	}
}

// replyFormat is the native JSON output a call whose reply is taken as the
// answer asks for, or nil: only for a json answer owed and taken from a
// reply, where the API has that output (with a schema, or for any JSON),
// strict where the schema fits.
func (a *answerShape) replyFormat(spec string, sh llm.Shapes, rank int, owes bool) *llm.ReplyFormat {
	c := a.contract
	if rank < rankNative || !c.Typed() || !owes || !a.stage.AnswersFromReply() || a.support.refused(spec, mechanismReply) {
		return nil
	}
	schema := c.ReplySchema()
	if schema == nil && !sh.ReplyAny || schema != nil && !sh.Reply {
		return nil
	}
	if a.shaped.strict && !c.ReplyBesideTool(sh.Strict) {
		return nil // the strict submit_output alone takes what the request's limits allow
	}
	f := &llm.ReplyFormat{Name: "answer", Schema: schema}
	if schema != nil && sh.Strict != "" && c.ReplyStrict(sh.Strict) == "" {
		f.Strict = true
		f.Schema = c.ReplySchemaFor(sh.Strict) // as written, or projected
	}
	return f
}

// submitSpecShaped is submit_output as shape s writes it.
func (a *answerShape) submitSpecShaped(s outputspec.ToolShape) llm.ToolSpec {
	w := a.ways(true)
	return llm.ToolSpec{Name: blueprint.ToolSubmitOutput, Description: a.contract.ToolDescriptionShaped(w, s), Schema: a.contract.ToolSchemaShaped(w, s), Strict: s.Strict != ""}
}

// answerCall reports whether nothing but the answer is left for a call
// offered tools: an output stage that offers only submit_output, the call
// after a nudge, the last repair (last).
func (a *answerShape) answerCall(tools []llm.ToolSpec, owes, last bool) bool {
	if !owes || !a.canSubmit() {
		return false
	}
	only := len(tools) == 1 && tools[0].Name == blueprint.ToolSubmitOutput
	return only || last
}

// learnRefused remembers for the session that spec's server refused a
// mechanism, warning the first time; it reports whether this is news (the
// call is then made again without it).
func (a *answerShape) learnRefused(spec string, err error) bool {
	var me *llm.MechanismError
	if !errors.As(err, &me) {
		return false
	}
	param, isParam := strings.CutPrefix(me.Mechanism, llm.ParamMechanismPrefix)
	switch {
	case isParam && a.stage.Model.Parameters[param] != nil:
	case me.Mechanism == mechanismStrict, me.Mechanism == mechanismToolChoice, me.Mechanism == mechanismReply:
	default:
		return false
	}
	if !a.support.refuse(spec, me.Mechanism) {
		return false
	}
	said := strings.TrimPrefix(me.Err.Error(), spec+": ")
	if isParam {
		a.notes.warn(fmt.Sprintf("%s's server refused the parameter %s of stage %s (it says: %s): coda sends the stage's parameters without it for the rest of the session", spec, param, a.stage.Name, oneLine(said, 300)))
		return true
	}
	what := map[string]string{
		mechanismStrict:     "strict schemas",
		mechanismToolChoice: "a forced tool choice",
		mechanismReply:      "a constrained reply format",
	}[me.Mechanism]
	a.notes.warn(fmt.Sprintf("%s's server refused %s (it says: %s): coda asks it without for the rest of the session, and checks every answer as always", spec, what, oneLine(said, 300)))
	return true
}

// The answer cut at the token limit (DESIGN §17): told apart from a
// malformed one, and refused for its length.

// cutAnswer is what the model is told of an answer cut after n bytes.
func (a *answerShape) cutAnswer(n int) string {
	return fmt.Sprintf("Your answer was cut at the token limit after %d bytes: shorten it. Nothing was recorded. %s.", n, a.how("a shorter answer"))
}

// The words of a reply (DESIGN §17): a leading <think>…</think> block, as
// local reasoning models write it, is reasoning, not the reply: streamed
// as a thought, dropped from the text that is checked as the answer and
// kept in the conversation.

const (
	thinkOpen  = "<think>"
	thinkClose = "</think>"
	// thinkLook bounds the white space held while it is not yet known
	// whether the reply opens with a think block.
	thinkLook = 1 << 10
)

// A thinkSplit routes a streamed reply's leading think block to thoughts,
// piece by piece, holding back only what could still be a tag.
type thinkSplit struct {
	state uint8 // thinkDeciding, thinkIn, thinkAfter, thinkText
	held  string
}

const (
	thinkDeciding = iota // not yet known whether the reply opens with <think>
	thinkIn              // inside the block
	thinkAfter           // after it: its white space is dropped
	thinkText            // the reply itself
)

// feed takes the next piece of the reply's text and returns what of it
// (and of what it held) is now known to be thought and reply.
func (t *thinkSplit) feed(text string) (thought, reply string) {
	if t.state == thinkText {
		return "", text
	}
	t.held += text
	for {
		switch t.state {
		case thinkDeciding:
			rest := strings.TrimLeft(t.held, " \t\r\n")
			switch {
			case strings.HasPrefix(rest, thinkOpen):
				t.state, t.held = thinkIn, rest[len(thinkOpen):]
				continue
			case strings.HasPrefix(thinkOpen, rest) && len(t.held) < thinkLook:
				return "", "" // it may yet be the tag
			}
			t.state = thinkText
			reply, t.held = t.held, ""
			return "", reply
		case thinkIn:
			if i := strings.Index(t.held, thinkClose); i >= 0 {
				thought = t.held[:i]
				t.state, t.held = thinkAfter, t.held[i+len(thinkClose):]
				_, reply = t.feed("")
				return thought, reply
			}
			keep := 0
			for k := min(len(thinkClose)-1, len(t.held)); k > 0; k-- {
				if strings.HasSuffix(t.held, thinkClose[:k]) {
					keep = k
					break
				}
			}
			thought, t.held = t.held[:len(t.held)-keep], t.held[len(t.held)-keep:]
			return thought, ""
		case thinkAfter:
			rest := strings.TrimLeft(t.held, " \t\r\n")
			if rest == "" {
				t.held = ""
				return "", ""
			}
			t.state, t.held = thinkText, ""
			return "", rest
		default:
			reply, t.held = t.held, ""
			return "", reply
		}
	}
}

// flush is what the split still holds when the reply ends: text that only
// began like a tag, or an unclosed block's end, which is thought.
func (t *thinkSplit) flush() (thought, reply string) {
	held := t.held
	t.held = ""
	switch t.state {
	case thinkDeciding:
		return "", held
	case thinkIn:
		return held, ""
	}
	return "", ""
}

// splitThink moves a reply's leading think block from its text to its
// thinking, as the stream was split.
func splitThink(resp *llm.Response) {
	rest := strings.TrimLeft(resp.Text, " \t\r\n")
	body, ok := strings.CutPrefix(rest, thinkOpen)
	if !ok {
		return
	}
	thought, after, closed := strings.Cut(body, thinkClose)
	if !closed {
		thought, after = body, ""
	}
	if thought = strings.TrimSpace(thought); thought != "" {
		if resp.Thinking != "" {
			resp.Thinking += "\n\n"
		}
		resp.Thinking += thought
	}
	resp.Text = strings.TrimLeft(after, " \t\r\n")
}
