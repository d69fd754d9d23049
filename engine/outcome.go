package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// How a stage visit ended (DESIGN §9, §19): status.json's outcome, with
// the transition taken (or the flag that ended the visit), the model that
// answered and the tokens it used; and the one line the next stage's
// preamble gives of each earlier visit.

// A visit's outcomes, as status.json spells them. A visit ended by a flag
// (max_iterations_hit, output_forced) names it instead.
const (
	endedTransition  = "transition"      // the model called transition
	endedDone        = "done"            // the model chose DONE
	endedAnswered    = "answered"        // a passing submission ended a stage without transitions
	endedReplied     = "replied"         // a reply without a tool call ended the visit
	endedFallback    = "fallback"        // a model without tools replied: the first way out
	endedRefusal     = "refusal"         // the model refused
	endedMaxTokens   = "max_tokens"      // the reply reached the output token limit
	endedUnavailable = "unavailable"     // the model declared the answer unavailable
	endedRunCap      = "max_model_calls" // the run used its model-call budget
	endedCancelled   = "cancelled"
	endedError       = "error"
)

// haltTo is where a halted visit goes, noting why it halted: the model
// declared the answer unavailable, or the repairs and the nudges ran out
// (output_forced).
func (v *stageVisit) haltTo() string {
	v.ended = FlagOutputForced
	if v.run.unavailable != "" {
		v.ended = endedUnavailable
	}
	return v.rep.haltTo
}

// endedBy is how a visit ended, err being what ended it, if anything, and
// ended what the visit said of it.
func endedBy(ctx context.Context, err error, ended string) string {
	switch {
	case err == nil && ended != "":
		return ended
	case err == nil:
		return endedReplied
	case errors.Is(err, context.Canceled) || ctx.Err() != nil:
		return endedCancelled
	case errors.Is(err, errMaxCalls):
		return endedRunCap
	}
	return endedError
}

// summary is the one line a later stage's preamble gives of a finished
// visit: "Model openai:gpt-5.1, 3 calls, 12,034 tokens in, 512 out; ended
// by transition to review."
func (o *stageOutcome) summary() string {
	var b strings.Builder
	if o.model != "" {
		fmt.Fprintf(&b, "Model %s, %s, %s tokens in, %s out; ", o.model, plural(o.calls, "call"), thousands(o.usage.InputTokens), thousands(o.usage.OutputTokens))
	}
	b.WriteString("ended ")
	switch o.ended {
	case endedTransition:
		fmt.Fprintf(&b, "by transition to %s", o.next)
	case endedDone:
		b.WriteString("by DONE")
	case endedAnswered:
		b.WriteString("with its answer")
	case endedReplied:
		b.WriteString("with a reply")
	case endedFallback:
		fmt.Fprintf(&b, "with a reply, going on to %s", o.next)
	default:
		b.WriteString("by " + o.ended)
		if o.next != "" {
			fmt.Fprintf(&b, ", going on to %s", o.next)
		}
	}
	b.WriteByte('.')
	return b.String()
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// thousands writes n with commas: 12,034.
func thousands(n int) string {
	s := fmt.Sprint(n)
	if n < 0 || len(s) <= 3 {
		return s
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
