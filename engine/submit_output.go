package engine

import (
	"context"

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

// canSubmit reports whether this visit offers submit_output.
func (v *stageVisit) canSubmit() bool { return v.contract != nil && v.stage.CanSubmit() }

// isSubmit reports whether a call of the named tool is this visit's
// submit_output.
func (v *stageVisit) isSubmit(name string) bool {
	return name == blueprint.ToolSubmitOutput && v.canSubmit()
}

func (v *stageVisit) submitSpec() llm.ToolSpec {
	w := v.ways(true)
	return llm.ToolSpec{Name: blueprint.ToolSubmitOutput, Description: v.contract.ToolDescriptionFor(w), Schema: v.contract.ToolSchemaFor(w)}
}

// submitTitle is how the editor shows a submit_output call.
func (v *stageVisit) submitTitle() string { return "submit_output (" + v.contract.Format() + ")" }

// submit runs a submit_output call. end reports that the submission
// passed and ends the stage: one without transitions, unless the answer
// was cut (then the model may submit a shorter one).
func (v *stageVisit) submit(ctx context.Context, tc llm.ToolCall) (res ToolResult, end bool) {
	verdict := v.check(ctx, tc)
	if verdict.Unavailable != "" {
		return v.unavailable(ctx, verdict.Unavailable), false
	}
	if !verdict.Accepted {
		v.refusal(refusalKey(tc.Arguments), verdict.Feedback)
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
	v.accepted()
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
