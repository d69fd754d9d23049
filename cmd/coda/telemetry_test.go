package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/coda-acp/coda/internal/telemetry/otlp"
	"github.com/coda-acp/coda/internal/telemetry/otlptest"
)

// The client's trace context, as ACP's _meta.traceparent carries it.
const (
	clientTrace  = "4bf92f3577b34da6a3ce929d0e0e4736"
	clientSpan   = "00f067aa0ba902b7"
	clientParent = "00-" + clientTrace + "-" + clientSpan + "-01"
)

// tracedAgent writes an agent whose turn reads a file and answers, and its
// model's script, and the file: the texts a trace must not carry unless
// the config asks for its content.
func tracedAgent(t *testing.T, dir string) (agent, model string) {
	agent, model = filepath.Join(dir, "blueprint.toml"), filepath.Join(dir, "model.toml")
	files := map[string]string{
		agent: "[agent]\nname = \"tracer\"\n[stages.answer]\nmode = \"output\"\navailable_tools = [\"read_file\"]\n",
		model: `
[[turn]]
text = "Reading the notes."
[[turn.tool_calls]]
name = "read_file"
arguments = { path = "notes.txt" }

[[turn]]
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "The notes say pineapple." }
`,
		filepath.Join(dir, "notes.txt"): "pineapple under the desk\n",
	}
	for path, text := range files {
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return agent, model
}

// telemetryEnv clears the machine's OTEL_* settings and sets kv, and
// counts the exporters coda builds.
func telemetryEnv(t *testing.T, kv ...string) *atomic.Int32 {
	for _, k := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_HEADERS",
		"OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
		"OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER", "OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES", "TRACEPARENT", "TRACESTATE"} {
		t.Setenv(k, "")
	}
	for i := 0; i+1 < len(kv); i += 2 {
		t.Setenv(kv[i], kv[i+1])
	}
	var built atomic.Int32
	start := startTracing
	startTracing = func(ctx context.Context, c otlp.Config) (*otlp.Tracer, error) {
		built.Add(1)
		return start(ctx, c)
	}
	t.Cleanup(func() { startTracing = start })
	return &built
}

// tracedTurn serves coda, runs the agent's one turn with the client's
// traceparent on session/prompt, and ends coda.
func tracedTurn(t *testing.T, args ...string) {
	dir := t.TempDir()
	agent, model := tracedAgent(t, dir)
	c := startACP(t, append([]string{"--agent", agent, "--model", "script:" + model, "--state-dir", filepath.Join(dir, "state")}, args...))
	c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)
	c.await(0)
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":%q,"mcpServers":[]}}`, dir))
	resp, _ := c.await(1)
	sid, _ := e2eDig(resp, "result", "sessionId").(string)
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"What do the notes say?"}],"_meta":{"traceparent":%q,"tracestate":"editor=1"}}}`, sid, clientParent))
	resp, _ = c.await(2)
	if got := e2eDig(resp, "result", "_meta", "coda", "status"); got != "answered" {
		t.Fatalf("status %v: %v\n%s", got, resp, c.stderr())
	}
	c.close() // the last spans go out as coda exits
}

// byName is the receiver's spans by name; a name twice (but a model
// call's: the turn makes two) is the test's failure.
func byName(t *testing.T, rcv *otlptest.Receiver) map[string]otlptest.Span {
	t.Helper()
	spans := map[string]otlptest.Span{}
	for _, s := range rcv.Spans() {
		if _, twice := spans[s.Name]; twice && !strings.HasPrefix(s.Name, "chat ") {
			t.Errorf("span %q twice", s.Name)
		}
		spans[s.Name] = s
	}
	return spans
}

// A served turn's spans reach the collector OTEL_EXPORTER_OTLP_ENDPOINT
// names: the turn's invoke_agent, under the client's _meta.traceparent;
// its stage's; each model call's chat with its model, provider, tokens and
// finish reason; each tool call's execute_tool; and none of the prompt's,
// the file's or the answer's text.
func TestServe_traces(t *testing.T) {
	rcv := otlptest.New(t)
	built := telemetryEnv(t, "OTEL_EXPORTER_OTLP_ENDPOINT", rcv.URL)
	tracedTurn(t)
	if built.Load() != 1 {
		t.Errorf("%d exporters built", built.Load())
	}
	spans := byName(t, rcv)
	turn, stage := spans["invoke_agent tracer"], spans["stage answer"]
	read, submit := spans["execute_tool read_file"], spans["execute_tool submit_output"]
	var chats []otlptest.Span
	for _, s := range rcv.Spans() {
		if strings.HasPrefix(s.Name, "chat ") {
			chats = append(chats, s)
		}
	}
	if turn.Name == "" || stage.Name == "" || read.Name == "" || submit.Name == "" || len(chats) != 2 || len(rcv.Spans()) != 6 {
		t.Fatalf("spans: %+v", rcv.Spans())
	}
	if turn.TraceID != clientTrace || turn.ParentSpanID != clientSpan {
		t.Errorf("the turn's span: trace %s, parent %s; want the client's %s, %s", turn.TraceID, turn.ParentSpanID, clientTrace, clientSpan)
	}
	for _, s := range rcv.Spans() {
		if s.TraceID != clientTrace {
			t.Errorf("%s: trace %s, not the client's", s.Name, s.TraceID)
		}
	}
	if stage.ParentSpanID != turn.SpanID || read.ParentSpanID != stage.SpanID || submit.ParentSpanID != stage.SpanID {
		t.Errorf("nesting: stage under %s (turn %s), tools under %s, %s (stage %s)", stage.ParentSpanID, turn.SpanID, read.ParentSpanID, submit.ParentSpanID, stage.SpanID)
	}
	attrs := map[string]string{"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "tracer", "gen_ai.provider.name": "script", "coda.run.status": "answered"}
	for k, v := range attrs {
		if turn.Attrs[k] != v {
			t.Errorf("turn: %s = %q, want %q", k, turn.Attrs[k], v)
		}
	}
	if turn.Attrs["gen_ai.conversation.id"] == "" || turn.Attrs["coda.run.id"] == "" {
		t.Errorf("turn: %v", turn.Attrs)
	}
	for i, chat := range chats {
		model := chat.Attrs["gen_ai.request.model"]
		if chat.ParentSpanID != stage.SpanID || chat.Name != "chat "+model || !strings.HasSuffix(model, "model.toml") ||
			chat.Attrs["gen_ai.operation.name"] != "chat" || chat.Attrs["gen_ai.provider.name"] != "script" ||
			chat.Attrs["gen_ai.usage.input_tokens"] == "0" || chat.Attrs["gen_ai.usage.input_tokens"] == "" || chat.Attrs["gen_ai.usage.output_tokens"] == "" ||
			chat.Attrs["gen_ai.response.finish_reasons"] != "tool_call" {
			t.Errorf("chat %d: %s under %s: %v", i, chat.Name, chat.ParentSpanID, chat.Attrs)
		}
	}
	if read.Attrs["gen_ai.operation.name"] != "execute_tool" || read.Attrs["gen_ai.tool.name"] != "read_file" || read.Attrs["gen_ai.tool.call.id"] == "" || read.StatusError {
		t.Errorf("read_file: %+v", read)
	}
	for _, s := range rcv.Spans() {
		for k, v := range s.Attrs {
			for _, text := range []string{"notes say", "pineapple", "Reading the notes"} {
				if strings.Contains(v, text) {
					t.Errorf("%s: %s = %q: text exported without include_content", s.Name, k, v)
				}
			}
		}
	}
}

// With telemetry off nothing is built and nothing is sent: no endpoint
// anywhere, or one in the config and the environment with the SDK
// disabled.
func TestServe_tracesOff(t *testing.T) {
	rcv := otlptest.New(t)
	for _, tc := range []struct {
		name   string
		env    []string
		config string
	}{
		{name: "no endpoint", config: "[telemetry]\ninclude_content = true\n"},
		{name: "disabled", env: []string{"OTEL_EXPORTER_OTLP_ENDPOINT", rcv.URL, "OTEL_SDK_DISABLED", "true"}, config: fmt.Sprintf("[telemetry]\nendpoint = %q\n", rcv.URL)},
		{name: "exporter none", env: []string{"OTEL_EXPORTER_OTLP_ENDPOINT", rcv.URL, "OTEL_TRACES_EXPORTER", "none"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			built := telemetryEnv(t, tc.env...)
			cfg := filepath.Join(t.TempDir(), "config.toml")
			if err := os.WriteFile(cfg, []byte(tc.config), 0o600); err != nil {
				t.Fatal(err)
			}
			tracedTurn(t, "--config", cfg)
			if built.Load() != 0 || rcv.Requests() != 0 {
				t.Errorf("%d exporters built, %d requests to the collector", built.Load(), rcv.Requests())
			}
		})
	}
}

// `coda run` with the config's [telemetry] (endpoint and include_content)
// exports the prompt, the replies, the tool's arguments and result and the
// answer, under the environment's TRACEPARENT.
func TestRun_tracesContent(t *testing.T) {
	rcv := otlptest.New(t)
	telemetryEnv(t, "TRACEPARENT", clientParent)
	dir := t.TempDir()
	agent, model := tracedAgent(t, dir)
	cfg := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf("[telemetry]\nendpoint = %q\ninclude_content = true\nheaders = { x-collector-key = \"k1\" }\n", rcv.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	t.Setenv("OLLAMA_HOST", "127.0.0.1:1")
	err := runOnce(context.Background(), []string{"--config", cfg, "--agent", agent, "--model", "script:" + model, "--state-dir", filepath.Join(dir, "state"),
		"--cwd", dir, "What do the notes say?"}, nil, &stdout, &stderr)
	if err != nil || stdout.String() != "The notes say pineapple.\n" {
		t.Fatalf("coda run = %v, stdout %q\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	spans := byName(t, rcv)
	turn, read := spans["invoke_agent tracer"], spans["execute_tool read_file"]
	if turn.TraceID != clientTrace || turn.ParentSpanID != clientSpan {
		t.Errorf("the run's span: trace %s, parent %s", turn.TraceID, turn.ParentSpanID)
	}
	for k, want := range map[string]string{
		"gen_ai.input.messages":  "What do the notes say?",
		"gen_ai.output.messages": "The notes say pineapple.",
	} {
		if !strings.Contains(turn.Attrs[k], want) {
			t.Errorf("turn: %s = %q, want it to hold %q", k, turn.Attrs[k], want)
		}
	}
	if !strings.Contains(read.Attrs["gen_ai.tool.call.arguments"], `"notes.txt"`) || !strings.Contains(read.Attrs["gen_ai.tool.call.result"], "pineapple under the desk") {
		t.Errorf("read_file: %v", read.Attrs)
	}
	replied := false
	for _, s := range rcv.Spans() {
		replied = replied || strings.HasPrefix(s.Name, "chat ") && strings.Contains(s.Attrs["gen_ai.output.messages"], "Reading the notes.")
	}
	if !replied {
		t.Errorf("no chat span carries the model's reply")
	}
	if h := rcv.Headers(); len(h) == 0 || h[0].Get("x-collector-key") != "k1" {
		t.Errorf("the config's headers were not sent: %v", h)
	}
}

// A collector that never answers holds neither the prompt's answer nor
// coda's exit (bounded by otlp.ShutdownTimeout).
func TestServe_tracesDeadCollector(t *testing.T) {
	rcv, release := otlptest.Hold(t)
	defer release()
	telemetryEnv(t, "OTEL_EXPORTER_OTLP_ENDPOINT", rcv.URL)
	tracedTurn(t)
	rcv.Wait() // the turn's spans did reach it, and hang there
}

// A [telemetry] endpoint that is no URL stops coda at start-up, in one
// line, before any token is spent.
func TestRun_telemetryEndpointRefused(t *testing.T) {
	built := telemetryEnv(t)
	dir := t.TempDir()
	agent, model := tracedAgent(t, dir)
	cfg := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(cfg, []byte("[telemetry]\nendpoint = \"localhost:4318\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("OLLAMA_HOST", "127.0.0.1:1")
	var stdout, stderr bytes.Buffer
	err := runOnce(context.Background(), []string{"--config", cfg, "--agent", agent, "--model", "script:" + model, "--state-dir", filepath.Join(dir, "state"), "go"}, nil, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), `config: [telemetry] endpoint "localhost:4318": give the collector's http:// or https:// URL`) {
		t.Errorf("coda run = %v", err)
	}
	if built.Load() != 1 || stdout.Len() != 0 {
		t.Errorf("%d exporters asked for, stdout %q", built.Load(), stdout.String())
	}
}
