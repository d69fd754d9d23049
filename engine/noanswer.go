package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/coda-acp/coda/internal/textcut"
)

// No silent endings (DESIGN §8): a run that ends without an answer, for
// whatever reason (cancelled, failed, unavailable, a stage that never
// answered), closes with one EventNoAnswer in place of the final answer,
// saying why in one line, and its Result says the same (NoAnswer). The one
// end of a run (run.finish) sends it.

// ending is what a run keeps to say why it has no answer.
type ending struct {
	// unavailable is the model's reason when it declared the answer
	// unavailable (unavailable.go).
	unavailable string
	// forced is the last stage that ended without the answer it owed;
	// exhausted says it had stopped repairing, and refusal is the last
	// refusal's reasons.
	forced    string
	exhausted bool
	refusal   string
	// declined is the model's words when it refused in a stage that takes
	// no unavailable (unavailable.go, refused).
	declined string
}

// closeWithoutAnswer sends the closing EventNoAnswer of a run without an
// answer, and sets res.NoAnswer.
func (r *run) closeWithoutAnswer(ctx context.Context, res *Result) {
	res.NoAnswer = r.whyNoAnswer(res)
	stage := ""
	if n := len(r.done); n > 0 {
		stage = r.done[n-1].stage
	}
	ev := Event{Kind: EventNoAnswer, Stage: stage, MessageID: r.e.NewID("m"), Text: "No answer: " + res.NoAnswer, Answer: res.Record()}
	// A cancelled run says so too: its context must not stop the message.
	if err := r.sink.Emit(context.WithoutCancel(ctx), ev); err != nil {
		r.log.Warn("sending the closing no-answer message", "err", err)
	}
}

// whyNoAnswer says in one line why res has no answer.
func (r *run) whyNoAnswer(res *Result) string {
	switch {
	case res.Status == StatusUnavailable:
		return "the model declared it unavailable: " + oneLine(r.unavailable, 300)
	case res.Status == StatusCancelled:
		return "cancelled"
	case res.Status == StatusFailed && res.Err != nil:
		return "the run failed: " + oneLine(res.Err.Error(), 300)
	case res.StopReason == "max_turn_requests":
		return fmt.Sprintf("the run used its budget of %d model calls", r.e.maxModelCalls())
	case res.StopReason == "refusal" && r.declined != "":
		return "the model refused to answer: " + oneLine(r.declined, 300)
	case res.StopReason == "refusal":
		return "the model refused to answer"
	case res.StopReason == "max_tokens":
		return "the model's reply was cut off at its output token limit"
	case r.forced != "" && r.exhausted:
		return fmt.Sprintf("stage %s stopped repairing its refused answers (%s); the last was refused because: %s", r.forced, FlagRepairsExhausted, oneLine(r.refusal, 200))
	case r.forced != "" && slices.Contains(r.flags, FlagMaxIterationsHit):
		return fmt.Sprintf("stage %s used its iterations without submitting one (%s, %s)", r.forced, FlagMaxIterationsHit, FlagOutputForced)
	case r.forced != "":
		return fmt.Sprintf("stage %s ended without submitting one (%s)", r.forced, FlagOutputForced)
	case r.t.Agent.CheckAnswers() != nil:
		if n := len(r.written); n > 0 {
			return fmt.Sprintf("agent %s gives none; the run changed %d file(s)", r.t.Agent.Agent.Name, n)
		}
		return fmt.Sprintf("agent %s gives none", r.t.Agent.Agent.Name)
	case len(r.done) > 0 && slices.Contains(r.flags, FlagDoneBeforeAnswer):
		return fmt.Sprintf("the model chose DONE in stage %s (allow_complete) before any stage that owes the answer (%s)", r.done[len(r.done)-1].stage, FlagDoneBeforeAnswer)
	case len(r.done) > 0:
		return fmt.Sprintf("the run ended in stage %s, which owes none", r.done[len(r.done)-1].stage)
	}
	return "the run ended without one"
}

// oneLine is s's first line, cut to at most n bytes at a character
// boundary, marked when anything was left out.
func oneLine(s string, n int) string {
	s = strings.TrimSpace(s)
	first, _, more := strings.Cut(s, "\n")
	first = strings.TrimSpace(first)
	if len(first) > n {
		first, more = textcut.At(first, n), true
	}
	if more {
		first += " …"
	}
	return first
}
