package engine

// Unavailable (DESIGN §15): submit_output(unavailable: "reason") lets the
// model say that the answer cannot be produced from what it has, rather
// than make one up. The run ends there, with status unavailable and the
// reason, and closes with the no-answer message (noanswer.go).
// allow_unavailable = false on a stage refuses it, as a refused
// submission: the stage must answer.

// unavailable runs a submit_output call that declares the answer
// unavailable for reason.
func (v *stageVisit) unavailable(reason string) ToolResult {
	if !v.stage.UnavailableAllowed() {
		const msg = `This stage must answer: it does not take "unavailable". Submit the best answer you can give from what you have, in "content".`
		v.refusal("unavailable\x00"+reason, msg)
		return Errorf("%s", msg)
	}
	v.run.unavailable = reason
	v.halt("")
	return ToolResult{Output: "Recorded: the answer is unavailable. The run ends here."}
}
