package otlp

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/coda-acp/coda/internal/telemetry"
)

// The spans, as the OpenTelemetry GenAI semantic conventions name them
// (semantic-conventions 1.37, docs/gen-ai: gen-ai-agent-spans.md's
// "Invoke agent internal span", gen-ai-spans.md's "Inference" and
// "Execute tool span"): a turn is `invoke_agent {agent}`, a model call
// `chat {model}`, a tool call `execute_tool {tool}`. A stage has no
// GenAI operation: its span is `stage {name}`, with coda's own
// attributes.

// GenAI attribute keys.
const (
	keyOperation      = "gen_ai.operation.name"
	keyProvider       = "gen_ai.provider.name"
	keyRequestModel   = "gen_ai.request.model"
	keyAgentName      = "gen_ai.agent.name"
	keyConversation   = "gen_ai.conversation.id"
	keyInputTokens    = "gen_ai.usage.input_tokens"
	keyOutputTokens   = "gen_ai.usage.output_tokens"
	keyCacheRead      = "gen_ai.usage.cache_read.input_tokens"
	keyCacheWrite     = "gen_ai.usage.cache_creation.input_tokens"
	keyFinishReasons  = "gen_ai.response.finish_reasons"
	keyToolName       = "gen_ai.tool.name"
	keyToolCallID     = "gen_ai.tool.call.id"
	keyToolArguments  = "gen_ai.tool.call.arguments"
	keyToolResult     = "gen_ai.tool.call.result"
	keyInputMessages  = "gen_ai.input.messages"
	keyOutputMessages = "gen_ai.output.messages"
	keyErrorType      = "error.type"
)

// operation is what a span is: how Finish and the content are named.
type operation int

const (
	opTurn operation = iota
	opStage
	opChat
	opTool
)

func (t *Tracer) Turn(ctx context.Context, turn telemetry.Turn) (context.Context, telemetry.Span) {
	attrs := []attribute.KeyValue{attribute.String(keyOperation, "invoke_agent"), attribute.String("coda.run.id", turn.RunID)}
	name := "invoke_agent"
	if turn.Agent != "" {
		name += " " + turn.Agent
		attrs = append(attrs, attribute.String(keyAgentName, turn.Agent))
	}
	if turn.Session != "" {
		attrs = append(attrs, attribute.String(keyConversation, turn.Session))
	}
	if turn.Model != "" {
		provider, model := splitSpec(turn.Model)
		attrs = append(attrs, attribute.String(keyRequestModel, model))
		if provider != "" {
			attrs = append(attrs, attribute.String(keyProvider, provider))
		}
	}
	return t.start(ctx, opTurn, name, trace.SpanKindInternal, attrs)
}

func (t *Tracer) Stage(ctx context.Context, name string, visit int) (context.Context, telemetry.Span) {
	return t.start(ctx, opStage, "stage "+name, trace.SpanKindInternal, []attribute.KeyValue{attribute.String("coda.stage.name", name), attribute.Int("coda.stage.visit", visit)})
}

func (t *Tracer) Chat(ctx context.Context, spec string) (context.Context, telemetry.Span) {
	provider, model := splitSpec(spec)
	attrs := []attribute.KeyValue{attribute.String(keyOperation, "chat"), attribute.String(keyRequestModel, model)}
	if provider != "" {
		attrs = append(attrs, attribute.String(keyProvider, provider))
	}
	return t.start(ctx, opChat, "chat "+model, trace.SpanKindClient, attrs)
}

func (t *Tracer) Tool(ctx context.Context, name, callID string) (context.Context, telemetry.Span) {
	attrs := []attribute.KeyValue{attribute.String(keyOperation, "execute_tool"), attribute.String(keyToolName, name)}
	if callID != "" {
		attrs = append(attrs, attribute.String(keyToolCallID, callID))
	}
	return t.start(ctx, opTool, "execute_tool "+name, trace.SpanKindInternal, attrs)
}

// start starts a span under the span ctx carries, or else under the
// client's traceparent (telemetry.WithParent), or else as a trace's root.
func (t *Tracer) start(ctx context.Context, op operation, name string, kind trace.SpanKind, attrs []attribute.KeyValue) (context.Context, telemetry.Span) {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		if tp, ts := telemetry.Parent(ctx); tp != "" {
			// An invalid traceparent extracts nothing: the span is a root.
			ctx = propagation.TraceContext{}.Extract(ctx, propagation.MapCarrier{"traceparent": tp, "tracestate": ts})
		}
	}
	ctx, s := t.tr.Start(ctx, name, trace.WithSpanKind(kind), trace.WithAttributes(attrs...))
	sp := &span{s: s, op: op, content: t.content}
	return telemetry.ContextWith(ctx, sp), sp
}

// span is a telemetry.Span over an SDK span.
type span struct {
	s       trace.Span
	op      operation
	content bool
	finish  string // the stop reason, for the output message's finish_reason
	output  string // the reply or answer, when content is kept
	hasOut  bool
}

func (s *span) KeepsContent() bool { return s.content }

func (s *span) Content(key telemetry.Key, text string) {
	if !s.content {
		return
	}
	switch key {
	case telemetry.InputText:
		s.s.SetAttributes(attribute.String(keyInputMessages, messages("user", text, "")))
	case telemetry.OutputText:
		s.output, s.hasOut = text, true // written at End, with the finish reason
	case telemetry.ToolArguments:
		s.s.SetAttributes(attribute.String(keyToolArguments, text))
	case telemetry.ToolResult:
		s.s.SetAttributes(attribute.String(keyToolResult, text))
	}
}

func (s *span) Usage(u telemetry.Usage) {
	attrs := []attribute.KeyValue{attribute.Int(keyInputTokens, u.Input), attribute.Int(keyOutputTokens, u.Output)}
	if u.CacheRead > 0 {
		attrs = append(attrs, attribute.Int(keyCacheRead, u.CacheRead))
	}
	if u.CacheWrite > 0 {
		attrs = append(attrs, attribute.Int(keyCacheWrite, u.CacheWrite))
	}
	s.s.SetAttributes(attrs...)
}

func (s *span) Finish(reason string) {
	s.finish = reason
	switch s.op {
	case opChat:
		s.s.SetAttributes(attribute.StringSlice(keyFinishReasons, []string{finishReason(reason)}))
	case opTurn:
		s.s.SetAttributes(attribute.String("coda.run.status", reason))
	case opStage:
		s.s.SetAttributes(attribute.String("coda.stage.outcome", reason))
	}
}

func (s *span) End(err error) {
	if s.hasOut {
		finish := "stop" // a turn's answer
		if s.op == opChat {
			finish = finishReason(s.finish)
		}
		s.s.SetAttributes(attribute.String(keyOutputMessages, messages("assistant", s.output, finish)))
	}
	if err != nil {
		s.s.RecordError(err)
		s.s.SetStatus(codes.Error, err.Error())
		s.s.SetAttributes(attribute.String(keyErrorType, errorType(err)))
	}
	s.s.End()
}

func (s *span) Traceparent() (traceparent, tracestate string) {
	c := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(trace.ContextWithSpan(context.Background(), s.s), c)
	return c["traceparent"], c["tracestate"]
}

// finishReason is a stop reason (llm.Stop*) as the GenAI output messages
// schema names it.
func finishReason(stop string) string {
	switch stop {
	case "end_turn", "":
		return "stop"
	case "tool_use":
		return "tool_call"
	case "max_tokens":
		return "length"
	case "refusal":
		return "content_filter"
	}
	return stop
}

// errorType is error.type: a low-cardinality class of err.
func errorType(err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "cancelled"
	case errors.Is(err, telemetry.ErrToolFailed):
		return "tool_error"
	}
	return "_OTHER"
}

// messages is one message as gen_ai.input.messages and
// gen_ai.output.messages have it (the conventions' JSON schemas), as
// JSON: spans take no structured attributes yet.
func messages(role, text, finish string) string {
	type part struct {
		Type    string `json:"type"`
		Content string `json:"content"`
	}
	type message struct {
		Role         string `json:"role"`
		Parts        []part `json:"parts"`
		FinishReason string `json:"finish_reason,omitempty"`
	}
	b, _ := json.Marshal([]message{{Role: role, Parts: []part{{Type: "text", Content: text}}, FinishReason: finish}})
	return string(b)
}

// splitSpec is a model spec's provider, as gen_ai.provider.name's
// well-known values name it where one applies, and its model:
// "anthropic:claude-…" is anthropic's claude-…; "NAME:MODEL" a configured
// provider's, named NAME; a Leviath "vendor/model" the vendor's; a bare
// id no provider.
func splitSpec(spec string) (provider, model string) {
	provider, model, ok := strings.Cut(spec, ":")
	if !ok {
		if v, m, ok := strings.Cut(spec, "/"); ok {
			provider, model = v, m
		} else {
			return "", spec
		}
	}
	switch provider {
	case "gemini", "google":
		provider = "gcp.gemini"
	case "mistral":
		provider = "mistral_ai"
	case "xai":
		provider = "x_ai"
	}
	return provider, model
}
