package engine

import (
	"cmp"
	"context"

	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/internal/telemetry"
)

// A turn's spans (DESIGN §23): a run of an agent (the turn's own, a worker,
// a child), each stage visit, each model call, each tool call, started
// and ended here through Engine.Tracer, which is telemetry.Off unless
// cmd/coda turned telemetry on. Their context carries them, so a span
// nests under the one its work runs in: a worker's run under its fan_out
// call. Text (the prompt, replies, the answer, tools' arguments and
// results) is given to a span only when it keeps content, masked as the
// record keeps it.

func (e *Engine) tracer() telemetry.Tracer {
	if e.Tracer == nil {
		return telemetry.Off
	}
	return e.Tracer
}

// traceRun starts the span of r's run.
func (r *run) traceRun(ctx context.Context) (context.Context, telemetry.Span) {
	t := r.t
	ctx, span := r.e.tracer().Turn(ctx, telemetry.Turn{Agent: t.Agent.Agent.Name, Session: t.SessionID, RunID: t.RunID, Model: cmp.Or(t.UserModel, t.DefaultModel)})
	if span.KeepsContent() {
		span.Content(telemetry.InputText, r.mask(t.Prompt))
	}
	return ctx, span
}

// tracedRun ends the span of r's run with how it ended, and at the end of
// the turn's own run asks for the turn's spans to go out.
func (r *run) tracedRun(span telemetry.Span, res *Result) {
	var u llm.Usage
	for _, d := range r.done {
		u.Add(d.usage)
	}
	span.Usage(usageOf(u))
	span.Finish(res.Status)
	if res.Answer != nil && span.KeepsContent() {
		span.Content(telemetry.OutputText, r.mask(res.Answer.Content))
	}
	span.End(res.Err)
	if r.sub.depth == 0 {
		r.e.tracer().Flush()
	}
}

// tracedVisit ends the span of a stage visit.
func (v *stageVisit) tracedVisit(span telemetry.Span, err error) {
	span.Usage(usageOf(v.usage))
	span.Finish(v.ended)
	span.End(err)
}

// tracedCall ends the span of a model call.
func (v *stageVisit) tracedCall(span telemetry.Span, resp *llm.Response, err error) {
	if resp != nil {
		span.Usage(usageOf(resp.Usage))
		span.Finish(resp.StopReason)
		if span.KeepsContent() {
			span.Content(telemetry.OutputText, v.run.mask(resp.Text))
		}
	}
	span.End(err)
}

// tracedTool ends the span of a tool call: a result that is an error is
// the span's.
func (v *stageVisit) tracedTool(span telemetry.Span, tc llm.ToolCall, res ToolResult) {
	if span.KeepsContent() {
		span.Content(telemetry.ToolArguments, v.run.mask(string(tc.Arguments)))
		span.Content(telemetry.ToolResult, v.run.mask(res.Output))
	}
	var err error
	if res.IsError {
		err = telemetry.ErrToolFailed
	}
	span.End(err)
}

func usageOf(u llm.Usage) telemetry.Usage {
	return telemetry.Usage{Input: u.InputTokens, Output: u.OutputTokens, CacheRead: u.CacheReadTokens, CacheWrite: u.CacheWriteTokens}
}
