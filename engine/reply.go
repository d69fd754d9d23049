package engine

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/coda-acp/coda/outputspec"
)

// A reply can be the answer (DESIGN §15): when a stage owes its answer and
// the model ends a call with text and no tool call, that text, trimmed, is
// checked as a submit_output call with it as content would be: the same
// path (check, the visit's Desk), every check of §4. A passing reply is
// the answer, flagged answer_from_reply; a refused one is nudged with the
// reasons, as the owed-output rule nudges (it costs a revisit) and it
// counts against the repair budget (repair.go). A reply cut at the
// model's token limit is not checked: it is not the whole answer.
// answer_from_reply = false on a stage turns this off. A model that cannot
// call tools (notools.go) answers this way only.

// AnswersFromReply reports whether a reply may be the stage's answer.
func (s *Stage) AnswersFromReply() bool { return s.AnswerFromReply == nil || *s.AnswerFromReply }

// repairReply is what follows a reply without a tool call in a visit that
// owes its answer: the reply checked as the answer, or a nudge. It reports
// whether the model is asked again.
func (v *stageVisit) repairReply(ctx context.Context, resp *Response) bool {
	if resp.StopReason == StopMaxTokens {
		// Not the model's choice: it ran out of room. This costs an
		// iteration but no revisit.
		v.say("Your reply was cut off at the model's output token limit before you submitted the answer. " + v.howToAnswer("a shorter answer") + ".")
		return true
	}
	text := strings.TrimSpace(resp.Text)
	if text == "" || v.contract == nil || !v.stage.AnswersFromReply() {
		return v.nudge("You have not submitted the answer yet. " + v.howToAnswer("the answer") + ".")
	}
	args, _ := json.Marshal(map[string]string{"content": text})
	verdict := v.check(ctx, ToolCall{Name: ToolSubmitOutput, Arguments: args})
	if verdict.Accepted {
		verdict.Flags = append(verdict.Flags, FlagAnswerFromReply)
		v.accept(verdict)
		return false
	}
	if v.refusal(refusalKey(args), verdict.Feedback) {
		return v.lastAttempt()
	}
	return v.nudge("Your reply was checked as the answer and refused:\n" + verdict.Feedback + "\n" + v.howToAnswer("the corrected answer") + ".")
}

// refusalKey is what identifies a refused submission: its arguments, as
// JSON without the model's whitespace, which tidyCalls took out when the
// reply came (a reply's are its text as content, encoded compactly).
// Artifacts belong to it: an answer resubmitted with other files is
// another submission.
func refusalKey(args json.RawMessage) string { return string(args) }

// howToAnswer tells the model how to hand in what ("the answer"), by the
// ways this visit takes it.
func (v *stageVisit) howToAnswer(what string) string {
	w := v.ways(!v.toolless)
	switch {
	case w.Tool && w.Reply:
		return "Call submit_output with " + what + ", or reply with it alone"
	case w.Reply:
		return "Reply with " + what + " alone, nothing before or after it"
	}
	return "Call submit_output with " + what
}

// ways are how this visit takes its answer when the model calls tools
// (tools) or not.
func (v *stageVisit) ways(tools bool) outputspec.Ways {
	s := v.stage
	return outputspec.Ways{
		Tool:        tools && v.canSubmit(),
		Reply:       s.AnswersFromReply(),
		Unavailable: tools && v.canSubmit() && s.UnavailableAllowed(),
	}
}
