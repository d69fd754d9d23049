// Package telemetry is what a turn knows of traces (DESIGN §23): a Tracer
// that starts the spans of a turn, a stage, a model call and a tool call,
// and Off, the tracer of a coda whose telemetry is off, which does
// nothing and allocates nothing. It imports no OpenTelemetry package:
// the SDK, the OTLP exporter and the GenAI semantic conventions are
// internal/telemetry/otlp's, which only cmd/coda imports, so the engine,
// acp and engine/mcp link none of it.
//
// Trace context crosses packages in the context: acp puts a client's
// _meta.traceparent there (WithParent), a tracer's spans put themselves
// there (ContextWith), and engine/mcp reads the current span's
// traceparent back for the HTTP requests of a tool call (Traceparent).
package telemetry

import (
	"context"
	"errors"
)

// ErrToolFailed ends the span of a tool call whose result is an error
// (what the model is told of it is not exported): error.type tool_error.
var ErrToolFailed = errors.New("the tool call failed")

// A Tracer starts spans. Each Start returns the context the operation
// runs in (the span its children's parent) and the span, which the
// caller ends once. The span a context carries is the new span's parent;
// failing that, the remote parent WithParent put there.
type Tracer interface {
	// Turn starts the span of a run of an agent: a prompt's turn, or a
	// worker or child it started (invoke_agent).
	Turn(ctx context.Context, t Turn) (context.Context, Span)
	// Stage starts the span of one visit of a stage.
	Stage(ctx context.Context, name string, visit int) (context.Context, Span)
	// Chat starts the span of one model call; model is its spec
	// ("anthropic:claude-…").
	Chat(ctx context.Context, model string) (context.Context, Span)
	// Tool starts the span of one tool call: its name, and the call's id
	// as the model gave it.
	Tool(ctx context.Context, name, callID string) (context.Context, Span)
	// Flush exports what has ended without waiting for it: the spans of
	// a turn that just ended go out then, not at the next batch.
	Flush()
}

// Turn is what a turn's span is started with.
type Turn struct {
	Agent   string // the blueprint's name
	Session string // the ACP session, "" for `coda run`
	RunID   string
	// Model is the model the user or the config chose ("" when each stage
	// names its own).
	Model string
}

// A Span is one operation's span. Its setters may be called any number of
// times before End; what they set after End is dropped.
type Span interface {
	// KeepsContent reports whether Content is exported: text is built for
	// it only then.
	KeepsContent() bool
	// Content sets one of the GenAI content attributes
	// (gen_ai.input.messages, …) to text, the prompt's, a reply's or a
	// tool's: exported only when the config's [telemetry] include_content
	// asks for it, dropped otherwise.
	Content(key Key, text string)
	// Usage sets the tokens a model call, a stage or a turn used.
	Usage(u Usage)
	// Finish sets a model call's stop reason (llm.Stop*) or how a stage
	// or turn ended.
	Finish(reason string)
	// End ends the span; a non-nil err is recorded as its error.
	End(err error)
	// Traceparent is the span's W3C traceparent and tracestate (for the
	// headers of a request made inside it); "" when it has none.
	Traceparent() (traceparent, tracestate string)
}

// Usage counts the tokens of a model call, or of the calls of a stage or
// turn.
type Usage struct {
	Input, Output         int // every prompt token, cached or not; every output token
	CacheRead, CacheWrite int
}

// Key names a content attribute.
type Key int

// The content a span may carry, when include_content asks for it.
const (
	// InputText is the text a model or agent was given: a turn's prompt
	// (gen_ai.input.messages).
	InputText Key = iota
	// OutputText is the text it answered: a turn's answer, a model
	// call's reply (gen_ai.output.messages).
	OutputText
	// ToolArguments and ToolResult are a tool call's
	// (gen_ai.tool.call.arguments, gen_ai.tool.call.result).
	ToolArguments
	ToolResult
)

// Off is the tracer of a coda whose telemetry is off: its spans do
// nothing and keep no content.
var Off Tracer = off{}

type off struct{}

func (off) Turn(ctx context.Context, _ Turn) (context.Context, Span)           { return ctx, offSpan{} }
func (off) Stage(ctx context.Context, _ string, _ int) (context.Context, Span) { return ctx, offSpan{} }
func (off) Chat(ctx context.Context, _ string) (context.Context, Span)         { return ctx, offSpan{} }
func (off) Tool(ctx context.Context, _, _ string) (context.Context, Span)      { return ctx, offSpan{} }
func (off) Flush()                                                             {}

type offSpan struct{}

func (offSpan) KeepsContent() bool            { return false }
func (offSpan) Content(Key, string)           {}
func (offSpan) Usage(Usage)                   {}
func (offSpan) Finish(string)                 {}
func (offSpan) End(error)                     {}
func (offSpan) Traceparent() (string, string) { return "", "" }

type spanKey struct{}

type parentKey struct{}

type remote struct{ traceparent, tracestate string }

// ContextWith is ctx carrying s as its current span: a Tracer's Start
// returns it, so that spans started inside nest, and Traceparent finds
// it.
func ContextWith(ctx context.Context, s Span) context.Context {
	return context.WithValue(ctx, spanKey{}, s)
}

// SpanFrom is the span ctx carries, or nil.
func SpanFrom(ctx context.Context) Span {
	s, _ := ctx.Value(spanKey{}).(Span)
	return s
}

// WithParent is ctx carrying a remote parent, as a client sent it (ACP's
// _meta.traceparent and _meta.tracestate): the turn's span is its child.
// A tracer that is off never reads it; one that is on ignores a
// traceparent that is not valid W3C trace context. "" leaves ctx as it
// is.
func WithParent(ctx context.Context, traceparent, tracestate string) context.Context {
	if traceparent == "" {
		return ctx
	}
	return context.WithValue(ctx, parentKey{}, remote{traceparent, tracestate})
}

// Parent is the remote parent WithParent put in ctx.
func Parent(ctx context.Context) (traceparent, tracestate string) {
	r, _ := ctx.Value(parentKey{}).(remote)
	return r.traceparent, r.tracestate
}

// Traceparent is the W3C traceparent and tracestate of the span ctx
// carries, for the headers of an HTTP request made in it; "" when ctx
// carries none (telemetry off, or outside a turn).
func Traceparent(ctx context.Context) (traceparent, tracestate string) {
	if s := SpanFrom(ctx); s != nil {
		return s.Traceparent()
	}
	return "", ""
}
