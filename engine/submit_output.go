package engine

import (
	"context"
	"fmt"

	"github.com/coda-acp/coda/engine/blueprint"
	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/outputspec"
	"github.com/coda-acp/coda/store"
)

// submit_output is the engine's tool through which a stage hands in its
// answer (DESIGN §4, §7). A stage gets it from mode = "output" or
// require_output; its description and schema come from the stage's
// contract. The contract's checks run on every call and nothing is
// recorded until one passes; what a visit does about a refusal is the
// repair loop's (repair.go).

// owes reports whether the visit still owes its answer.
func (v *stageVisit) owes() bool { return v.stage.OwesOutput() && v.submitted == nil }

// check puts a submit_output call before the visit's Desk. Arguments cut
// while they streamed are refused here, unparsed: the answer is over its
// cap whatever the rest says.
func (v *stageVisit) check(ctx context.Context, tc llm.ToolCall) outputspec.Verdict {
	if tc.Dropped > 0 {
		return outputspec.Verdict{Feedback: fmt.Sprintf("The answer is too large: this submit_output call's arguments are %d bytes, over the %d-byte cap (the answer itself may be at most %d bytes). Nothing was recorded. Submit a shorter answer.",
			tc.Size(), llm.ArgsCap(tc.Name), outputspec.MaxAnswer)}
	}
	return v.checkSubmission(ctx, outputspec.Submission{Args: tc.Arguments, Typed: v.answer.shaped.typed, Projected: v.answer.shaped.family})
}

// checkSubmission checks a submission at the visit's Desk, in the run's
// workspace, and puts a passing answer to the taint gate.
func (v *stageVisit) checkSubmission(ctx context.Context, sub outputspec.Submission) outputspec.Verdict {
	if v.desk == nil {
		v.desk = outputspec.NewDesk(v.contract)
	}
	r := v.run
	sub.Root, sub.Stages, sub.Overwritten = r.t.Workspace.Cwd(), r.t.Agent.Order, r.overwritten
	verdict := v.desk.Submit(ctx, sub)
	if verdict.Accepted {
		v.capture(&verdict) // files kept by glob (capture.go), before the gate sees them
	}
	format := ""
	if v.contract != nil {
		format = v.contract.Format()
	}
	return v.gate.answer(ctx, v.callID, verdict, format) // the taint gate, before a passing answer is recorded
}

// canSubmit reports whether this visit offers submit_output.
func (a *answerShape) canSubmit() bool { return a.contract != nil && a.stage.CanSubmit() }

// isSubmit reports whether a call of the named tool is this visit's
// submit_output.
func (a *answerShape) isSubmit(name string) bool {
	return name == blueprint.ToolSubmitOutput && a.canSubmit()
}

func (a *answerShape) submitSpec() llm.ToolSpec {
	w := a.ways(true)
	return llm.ToolSpec{Name: blueprint.ToolSubmitOutput, Description: a.contract.ToolDescriptionFor(w), Schema: a.contract.ToolSchemaFor(w)}
}

// submitTitle is how the editor shows a submit_output call.
func (a *answerShape) submitTitle() string { return "submit_output (" + a.contract.Format() + ")" }

// submit runs a submit_output call. end reports that the submission
// passed and ends the stage: one without transitions, unless the answer
// was cut (then the model may submit a shorter one).
func (v *stageVisit) submit(ctx context.Context, tc llm.ToolCall) (res ToolResult, end bool) {
	verdict := v.check(ctx, tc)
	if verdict.Unavailable != "" {
		return v.unavailable(ctx, verdict.Unavailable), false
	}
	if !verdict.Accepted {
		v.rep.refusal(refusalKey(tc.Arguments), verdict.Feedback)
		return ToolResult{Output: verdict.Feedback, IsError: true}, false
	}
	v.accept(verdict)
	out := "Accepted: the answer is recorded."
	if verdict.Feedback != "" {
		out = verdict.Feedback
	}
	return ToolResult{Output: out}, len(v.stage.TransitionOrder) == 0 && !verdict.Truncated
}

// accept makes a passing verdict the visit's answer and the run's: a later
// passing one replaces it.
func (v *stageVisit) accept(verdict outputspec.Verdict) {
	r := v.run
	v.rep.accepted()
	r.keepArtifacts(verdict.Artifacts)
	for _, w := range verdict.Warnings {
		r.warn(w)
	}
	for _, f := range verdict.Flags {
		r.flag(f)
	}
	a := &store.Answer{
		Stage: v.stage.Name, Format: v.contract.Format(), Content: verdict.Content, Data: verdict.Data, Truncated: verdict.Truncated,
		Flags: nonNil(verdict.Flags), Warnings: nonNil(verdict.Warnings), Artifacts: verdict.Artifacts,
	}
	if a.Artifacts == nil {
		a.Artifacts = []outputspec.Artifact{}
	}
	v.submitted = a
	r.answer = a
}
