package engine

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/coda-acp/coda/engine/llm"
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

// repairReply is what follows a reply without a tool call in a visit that
// owes its answer: the reply checked as the answer, or a nudge. It reports
// whether the model is asked again.
func (v *stageVisit) repairReply(ctx context.Context, resp *llm.Response) bool {
	if resp.StopReason == llm.StopMaxTokens {
		// Not the model's choice, nor a malformed answer: it ran out of
		// room (DESIGN §17). This costs an iteration but no revisit.
		v.say(v.answer.cutAnswer(len(resp.Text)))
		return true
	}
	text := strings.TrimSpace(resp.Text)
	if text == "" || v.contract == nil || !v.stage.AnswersFromReply() {
		return v.again(v.rep.nudge("You have not submitted the answer yet. " + v.answer.how("the answer") + "."))
	}
	verdict := v.checkSubmission(ctx, outputspec.Submission{Reply: text, Projected: v.answer.shaped.replyFamily})
	if verdict.Accepted {
		verdict.Flags = append(verdict.Flags, FlagAnswerFromReply)
		v.accept(verdict)
		return false
	}
	if v.rep.refusal(replyKey(text), verdict.Feedback) {
		return v.again(v.rep.lastAttempt(v.answer.how("a corrected answer"), v.out.fallback()))
	}
	return v.again(v.rep.nudge("Your reply was checked as the answer and refused:\n" + verdict.Feedback + "\n" + v.answer.how("the corrected answer") + "."))
}

// refusalKey is what identifies a refused submission: a hash of its
// arguments, as JSON without the model's whitespace, which tidyCalls took
// out when the reply came. Artifacts belong to it: an answer resubmitted
// with other files is another submission.
func refusalKey(args json.RawMessage) string {
	sum := sha256.Sum256(args)
	return string(sum[:])
}

// replyKey is refusalKey of the arguments a reply's text stands for,
// {"content": text} as json.Marshal writes it, hashed piece by piece: a
// reply has no length cap, and encoding it whole would hold it twice more.
// A piece ends where a character starts, so each is escaped as it would
// be in the whole.
func replyKey(text string) string { return replyKeyPieces(text, 32<<10) }

func replyKeyPieces(text string, piece int) string {
	h := sha256.New()
	h.Write([]byte(`{"content":"`))
	for len(text) > 0 {
		n := min(len(text), piece)
		for k := 1; k < utf8.UTFMax && n < len(text) && !utf8.RuneStart(text[n]); k++ {
			n++ // the next character starts within three bytes, or no character spans the cut
		}
		quoted, _ := json.Marshal(text[:n])
		h.Write(quoted[1 : len(quoted)-1])
		text = text[n:]
	}
	h.Write([]byte(`"}`))
	return string(h.Sum(nil))
}

// how tells the model how to hand in what ("the answer"), by the ways
// this visit takes it.
func (a *answerShape) how(what string) string {
	w := a.ways(!a.toolless)
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
func (a *answerShape) ways(tools bool) outputspec.Ways {
	s := a.stage
	return outputspec.Ways{
		Tool:        tools && a.canSubmit(),
		Reply:       s.AnswersFromReply(),
		Unavailable: tools && a.canSubmit() && s.UnavailableAllowed(),
	}
}
