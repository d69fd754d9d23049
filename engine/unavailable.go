package engine

import (
	"context"
	"strings"

	"github.com/coda-acp/coda/engine/llm"
)

// Unavailable (DESIGN §15): submit_output(unavailable: "reason") lets the
// model say that the answer cannot be produced from what it has, rather
// than make one up. The run ends there, with status unavailable and the
// reason, and closes with the no-answer message (noanswer.go).
// allow_unavailable = false on a stage refuses it, as a refused
// submission: the stage must answer.
//
// The model's own refusal (an API's: OpenAI's refusal, a refusal stop
// reason; DESIGN §17) ends the visit too, since no nudge turns it into an
// answer, with stopReason refusal. Where the stage takes unavailable, the
// answer is unavailable in the model's words. Where it does not
// (allow_unavailable = false), the run ends without an answer and without
// that status, which the stage said it never gives (a caller may take
// `unavailable`, exit 4, as an answer of its own): the no-answer message
// says the model refused, in its words.

// unavailable runs a submit_output call that declares the answer
// unavailable for reason. The reason is what the caller receives in the
// answer's place, so in a tainted run it meets the taint gate as an answer
// does (visitGate.reason).
func (v *stageVisit) unavailable(ctx context.Context, reason string) ToolResult {
	if !v.stage.UnavailableAllowed() {
		const msg = `This stage must answer: it does not take "unavailable". Submit the best answer you can give from what you have, in "content".`
		v.rep.refusal("unavailable\x00"+reason, msg)
		return Errorf("%s", msg)
	}
	if refusal := v.gate.reason(ctx, v.callID, reason); refusal != "" {
		v.rep.refusal("unavailable\x00"+reason, refusal)
		return Errorf("%s", refusal)
	}
	v.run.unavailable = reason
	v.rep.halt("")
	return ToolResult{Output: "Recorded: the answer is unavailable. The run ends here."}
}

// refused ends the visit on the model's refusal resp (see the top of this
// file).
func (v *stageVisit) refused(resp *llm.Response) {
	r := v.run
	r.stop = "refusal"
	v.ended = endedRefusal
	words := strings.TrimSpace(resp.Refusal)
	if words == "" {
		words = strings.TrimSpace(resp.Text)
	}
	if g := r.taint; !g.Allows() {
		// The caller receives them, and the visit ends: no call is left
		// to refuse them to, so what the gate would refuse is masked.
		words = g.Mask(words)
	}
	switch {
	case words == "":
	case v.stage.UnavailableAllowed():
		r.unavailable = words
		v.ended = endedUnavailable
	default:
		r.declined = words
	}
}
