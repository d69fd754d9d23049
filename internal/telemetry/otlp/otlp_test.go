package otlp_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/coda-acp/coda/internal/telemetry"
	"github.com/coda-acp/coda/internal/telemetry/otlp"
	"github.com/coda-acp/coda/internal/telemetry/otlptest"
)

const clientParent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"

// clearEnv keeps the machine's OTEL_* settings out of a test.
func clearEnv(t *testing.T) {
	for _, k := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_HEADERS",
		"OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
		"OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER", "OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES"} {
		t.Setenv(k, "")
	}
}

// turn runs the spans of a turn with one stage, one model call and one
// tool call, its content offered to every span.
func turn(t *testing.T, tr *otlp.Tracer) {
	ctx := telemetry.WithParent(context.Background(), clientParent, "vendor=1")
	ctx, turn := tr.Turn(ctx, telemetry.Turn{Agent: "reviewer", Session: "s1", RunID: "r1", Model: "anthropic:claude-test"})
	turn.Content(telemetry.InputText, "the secret prompt")
	sctx, stage := tr.Stage(ctx, "review", 1)
	_, chat := tr.Chat(sctx, "openai:gpt-test")
	chat.Usage(telemetry.Usage{Input: 120, Output: 30, CacheRead: 100})
	chat.Finish("tool_use")
	chat.Content(telemetry.OutputText, "the secret reply")
	chat.End(nil)
	tctx, tool := tr.Tool(sctx, "read_file", "call_1")
	if tp, _ := telemetry.Traceparent(tctx); !strings.HasPrefix(tp, "00-0af7651916cd43dd8448eb211c80319c-") {
		t.Errorf("the tool's traceparent = %q, not in the client's trace", tp)
	}
	tool.Content(telemetry.ToolArguments, `{"path":"secret.txt"}`)
	tool.Content(telemetry.ToolResult, "the secret file")
	tool.End(telemetry.ErrToolFailed)
	stage.Finish("answered")
	stage.End(nil)
	turn.Content(telemetry.OutputText, "the secret answer")
	turn.Finish("answered")
	turn.End(nil)
}

func newTracer(t *testing.T, c otlp.Config) *otlp.Tracer {
	t.Helper()
	tr, err := otlp.New(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func TestTracer_spans(t *testing.T) {
	clearEnv(t)
	rcv := otlptest.New(t)
	tr := newTracer(t, otlp.Config{Endpoint: rcv.URL, Headers: map[string]string{"x-key": "k1"}, Version: "9.9"})
	turn(t, tr)
	if err := tr.Shutdown(otlp.ShutdownTimeout); err != nil {
		t.Fatal(err)
	}
	spans := map[string]otlptest.Span{}
	for _, s := range rcv.Spans() {
		spans[s.Name] = s
	}
	turnSpan, stage, chat, tool := spans["invoke_agent reviewer"], spans["stage review"], spans["chat gpt-test"], spans["execute_tool read_file"]
	if len(spans) != 4 || turnSpan.Name == "" || stage.Name == "" || chat.Name == "" || tool.Name == "" {
		t.Fatalf("spans: %v", rcv.Spans())
	}
	if turnSpan.TraceID != "0af7651916cd43dd8448eb211c80319c" || turnSpan.ParentSpanID != "b7ad6b7169203331" {
		t.Errorf("the turn's span is not the client's traceparent's child: trace %s parent %s", turnSpan.TraceID, turnSpan.ParentSpanID)
	}
	if stage.ParentSpanID != turnSpan.SpanID || chat.ParentSpanID != stage.SpanID || tool.ParentSpanID != stage.SpanID {
		t.Errorf("nesting: stage's parent %s (turn %s), chat's %s and tool's %s (stage %s)", stage.ParentSpanID, turnSpan.SpanID, chat.ParentSpanID, tool.ParentSpanID, stage.SpanID)
	}
	want := map[*otlptest.Span]map[string]string{
		&turnSpan: {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "reviewer", "gen_ai.conversation.id": "s1", "coda.run.id": "r1",
			"gen_ai.provider.name": "anthropic", "gen_ai.request.model": "claude-test", "coda.run.status": "answered"},
		&stage: {"coda.stage.name": "review", "coda.stage.visit": "1", "coda.stage.outcome": "answered"},
		&chat: {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-test",
			"gen_ai.usage.input_tokens": "120", "gen_ai.usage.output_tokens": "30", "gen_ai.usage.cache_read.input_tokens": "100",
			"gen_ai.response.finish_reasons": "tool_call"},
		&tool: {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "read_file", "gen_ai.tool.call.id": "call_1", "error.type": "tool_error"},
	}
	for s, attrs := range want {
		for k, v := range attrs {
			if s.Attrs[k] != v {
				t.Errorf("%s: %s = %q, want %q", s.Name, k, s.Attrs[k], v)
			}
		}
	}
	if chat.Kind != tracepb.Span_SPAN_KIND_CLIENT || tool.Kind != tracepb.Span_SPAN_KIND_INTERNAL || turnSpan.Kind != tracepb.Span_SPAN_KIND_INTERNAL {
		t.Errorf("kinds: chat %v, tool %v, turn %v", chat.Kind, tool.Kind, turnSpan.Kind)
	}
	if !tool.StatusError || len(tool.Events) != 1 || tool.Events[0] != "exception" {
		t.Errorf("the failed tool call's span: status error %v, events %v", tool.StatusError, tool.Events)
	}
	if turnSpan.ServiceName != "coda" {
		t.Errorf("service.name = %q", turnSpan.ServiceName)
	}
	for _, s := range rcv.Spans() {
		for k, v := range s.Attrs {
			if strings.Contains(v, "secret") {
				t.Errorf("%s: %s = %q: content exported without include_content", s.Name, k, v)
			}
		}
	}
	if h := rcv.Headers(); len(h) == 0 || h[0].Get("x-key") != "k1" || h[0].Get("Content-Type") != "application/x-protobuf" {
		t.Errorf("headers: %v", h)
	}
}

func TestTracer_includeContent(t *testing.T) {
	clearEnv(t)
	rcv := otlptest.New(t)
	tr := newTracer(t, otlp.Config{Endpoint: rcv.URL, IncludeContent: true})
	turn(t, tr)
	if err := tr.Shutdown(otlp.ShutdownTimeout); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range rcv.Spans() {
		for k, v := range s.Attrs {
			if strings.Contains(v, "secret") {
				got[s.Name+" "+k] = v
			}
		}
	}
	want := map[string]string{
		"invoke_agent reviewer gen_ai.input.messages":       `[{"role":"user","parts":[{"type":"text","content":"the secret prompt"}]}]`,
		"invoke_agent reviewer gen_ai.output.messages":      `[{"role":"assistant","parts":[{"type":"text","content":"the secret answer"}],"finish_reason":"stop"}]`,
		"chat gpt-test gen_ai.output.messages":              `[{"role":"assistant","parts":[{"type":"text","content":"the secret reply"}],"finish_reason":"tool_call"}]`,
		"execute_tool read_file gen_ai.tool.call.arguments": `{"path":"secret.txt"}`,
		"execute_tool read_file gen_ai.tool.call.result":    "the secret file",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("content: %v", got)
	}
}

// TestTracer_envWins: the standard environment's endpoint and headers win
// over the config's.
func TestTracer_envWins(t *testing.T) {
	clearEnv(t)
	env, cfg := otlptest.New(t), otlptest.New(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", env.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-key=from-env")
	t.Setenv("OTEL_SERVICE_NAME", "coda-ci")
	c := otlp.Config{Endpoint: cfg.URL, Headers: map[string]string{"x-key": "from-config"}}
	if !c.Enabled() {
		t.Fatal("not enabled")
	}
	tr := newTracer(t, c)
	turn(t, tr)
	if err := tr.Shutdown(otlp.ShutdownTimeout); err != nil {
		t.Fatal(err)
	}
	if cfg.Requests() != 0 || len(env.Spans()) != 4 {
		t.Fatalf("the config's receiver got %d requests, the environment's %d spans", cfg.Requests(), len(env.Spans()))
	}
	if h := env.Headers()[0].Get("x-key"); h != "from-env" {
		t.Errorf("x-key = %q", h)
	}
	if s := env.Spans()[0].ServiceName; s != "coda-ci" {
		t.Errorf("service.name = %q, not OTEL_SERVICE_NAME's", s)
	}
}

func TestConfig_Enabled(t *testing.T) {
	for _, tc := range []struct {
		env      map[string]string
		endpoint string
		want     bool
	}{
		{want: false},
		{endpoint: "http://localhost:4318", want: true},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, want: true},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces"}, want: true},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SDK_DISABLED": "true"}, want: false},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "none"}, endpoint: "http://localhost:4318", want: false},
	} {
		clearEnv(t)
		for k, v := range tc.env {
			t.Setenv(k, v)
		}
		if got := (otlp.Config{Endpoint: tc.endpoint}).Enabled(); got != tc.want {
			t.Errorf("env %v, endpoint %q: Enabled = %v", tc.env, tc.endpoint, got)
		}
	}
}

func TestConfig_Check(t *testing.T) {
	for _, bad := range []string{"localhost:4318", "ftp://c", "http://"} {
		if err := (otlp.Config{Endpoint: bad}).Check(); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	if err := (otlp.Config{Endpoint: "https://otlp.example.com/base"}).Check(); err != nil {
		t.Error(err)
	}
}

// TestTracer_deadCollector: a collector that never answers holds neither
// a turn's end (Flush returns at once) nor the exit (Shutdown returns
// within its bound).
func TestTracer_deadCollector(t *testing.T) {
	clearEnv(t)
	rcv, release := otlptest.Hold(t)
	defer release()
	tr := newTracer(t, otlp.Config{Endpoint: rcv.URL})
	turn(t, tr)
	tr.Flush() // returns without waiting for the export
	rcv.Wait() // which has reached the collector, and hangs there
	tr.Flush()
	err := tr.Shutdown(50 * time.Millisecond)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Shutdown = %v, want its bound's deadline", err)
	}
}

// A content attribute is cut at MaxAttributeLength characters: the queue of spans
// waiting for export stays bounded.
func TestTracer_contentBounded(t *testing.T) {
	clearEnv(t)
	rcv := otlptest.New(t)
	tr := newTracer(t, otlp.Config{Endpoint: rcv.URL, IncludeContent: true})
	_, tool := tr.Tool(context.Background(), "read_file", "call_1")
	tool.Content(telemetry.ToolResult, strings.Repeat("é", otlp.MaxAttributeLength+100))
	tool.End(nil)
	if err := tr.Shutdown(otlp.ShutdownTimeout); err != nil {
		t.Fatal(err)
	}
	got := rcv.Spans()[0].Attrs["gen_ai.tool.call.result"]
	if n := utf8.RuneCountInString(got); n != otlp.MaxAttributeLength || !utf8.ValidString(got) {
		t.Errorf("the result kept %d characters (valid UTF-8: %v)", n, utf8.ValidString(got))
	}
}
