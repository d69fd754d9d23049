package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/provider/anthropic/anthropictest"
	"github.com/coda-acp/coda/engine/provider/sse"
)

// The fake API these tests meet is anthropictest's: it holds every
// request to the rules Anthropic documents.

func newFakeAPI(t *testing.T, turns ...anthropictest.Turn) *anthropictest.Server {
	t.Helper()
	f := anthropictest.NewServer()
	f.Key = testKey
	f.Reply = func(n int, r *anthropictest.Request) anthropictest.Turn { return turns[min(n, len(turns)-1)] }
	t.Cleanup(f.Close)
	return f
}

func fakeText(text string) anthropictest.Turn {
	return anthropictest.Turn{Blocks: []anthropictest.Block{anthropictest.Text(text)}}
}

func fakeModel(f *anthropictest.Server, model string, opts Options) *Model {
	opts.BaseURL = f.URL
	opts.APIKey = testKey
	opts.Client = f.Client()
	opts.Retry = sse.Retry{Tries: 1}
	return New(model, opts)
}

func call(m *Model, req *llm.Request) (*llm.Response, []llm.Delta, error) {
	var deltas []llm.Delta
	resp, err := m.Stream(context.Background(), req, func(d llm.Delta) error { deltas = append(deltas, d); return nil })
	return resp, deltas, err
}

// interleaved answers as a model with interleaved thinking does: think,
// call, think again, call (and a redacted block); the fake signs each
// thinking block.
func interleaved(n int) anthropictest.Turn {
	d := string(rune('0' + n))
	return anthropictest.Turn{Blocks: []anthropictest.Block{
		anthropictest.Thinking("Step " + d + ": read first."),
		anthropictest.Text("Reading."),
		anthropictest.ToolUse("toolu_a"+d, "read_file", `{"path": "a.go"}`),
		anthropictest.Thinking("Then list."),
		anthropictest.Redacted(),
		anthropictest.ToolUse("toolu_b"+d, "list_files", ""),
	}}
}

// loop runs a tool loop as the stage engine does, until a reply calls
// nothing.
func loop(t *testing.T, m *Model, req *llm.Request) []*llm.Response {
	t.Helper()
	var out []*llm.Response
	for range 5 {
		resp, _, err := call(m, req)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, resp)
		if len(resp.ToolCalls) == 0 {
			return out
		}
		req.Messages = append(req.Messages, llm.Message{Role: llm.RoleAssistant, Text: resp.Text, Thinking: resp.Thinking, ToolCalls: resp.ToolCalls, Replay: resp.Replay})
		for _, tc := range resp.ToolCalls {
			req.Messages = append(req.Messages, llm.Message{Role: llm.RoleTool, ToolCallID: tc.ID, ToolName: tc.Name, Text: strings.Repeat("file contents ", 50)})
		}
	}
	t.Fatal("the loop did not end")
	return nil
}

func loopRequest() *llm.Request {
	return &llm.Request{
		System:   strings.Repeat("You review code carefully. ", 40),
		Messages: []llm.Message{{Role: llm.RoleUser, Text: "Is auth safe?"}},
		Tools: []llm.ToolSpec{
			{Name: "read_file", Description: "Read a file.", Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`), Strict: true},
			{Name: "list_files", Description: "List files."},
		},
	}
}

// A tool loop with interleaved and redacted thinking on the models that
// think adaptively: every block goes back in its place with its
// signature (the fake refuses one it did not sign, for that model, with
// that text), and the loop reads its prefix from the cache.
func TestFake_toolLoop(t *testing.T) {
	for _, tt := range []struct{ model, style string }{
		{"claude-opus-4-7", ThinkingAdaptive},
		{"claude-sonnet-5", ThinkingAdaptiveOn},
		{"claude-opus-5-5", ThinkingAlways},
		{"claude-opus-4-6", ThinkingBoth},
	} {
		t.Run(tt.model, func(t *testing.T) {
			f := newFakeAPI(t, interleaved(1), interleaved(2), fakeText("Safe."))
			m := fakeModel(f, tt.model, Options{Thinking: tt.style, Effort: llm.EffortHigh})
			resps := loop(t, m, loopRequest())
			if len(resps) != 3 || resps[2].Text != "Safe." {
				t.Fatalf("responses %+v (the fake refused: %v)", resps, f.Refusals())
			}
			if r := resps[0]; r.Thinking != "Step 1: read first.Then list." || len(r.ToolCalls) != 2 {
				t.Errorf("first reply %+v", r)
			}
			reqs := f.Requests()
			last := reqs[2].Body
			var types []string
			for _, b := range last.Messages[1].Blocks() {
				types = append(types, b.Type)
			}
			if got := strings.Join(types, ","); got != "thinking,text,tool_use,thinking,redacted_thinking,tool_use" {
				t.Errorf("the first reply went back as %s", got)
			}
			if th := last.Thinking; th == nil || th.Type != "adaptive" || th.Display != "summarized" || last.OutputConfig == nil || last.OutputConfig.Effort != "high" {
				t.Errorf("thinking %+v, output_config %+v", last.Thinking, last.OutputConfig)
			}
			// The second call reads the first's prefix from the cache, the
			// third the second's.
			if resps[0].Usage.CacheWriteTokens == 0 || resps[0].Usage.CacheReadTokens != 0 {
				t.Errorf("first call's usage %+v: it writes the cache", resps[0].Usage)
			}
			for i := 1; i < 3; i++ {
				u := resps[i].Usage
				if u.CacheReadTokens == 0 || u.CacheReadTokens >= u.InputTokens || u.CacheReadTokens <= resps[i-1].Usage.CacheReadTokens {
					t.Errorf("call %d's usage %+v (before %+v): the loop does not read its growing prefix from the cache", i+1, u, resps[i-1].Usage)
				}
			}
		})
	}
}

// cache = false sends no breakpoint, and the fake caches nothing.
func TestFake_noCache(t *testing.T) {
	f := newFakeAPI(t, interleaved(1), fakeText("Safe."))
	m := fakeModel(f, "claude-opus-4-7", Options{Thinking: ThinkingAdaptive, Effort: llm.EffortLow, NoCache: true})
	resps := loop(t, m, loopRequest())
	for _, r := range resps {
		if r.Usage.CacheReadTokens != 0 || r.Usage.CacheWriteTokens != 0 {
			t.Errorf("usage %+v with caching off", r.Usage)
		}
	}
	for _, r := range f.Requests() {
		if string(r.Body.System[:1]) != `"` {
			t.Errorf("system %s: a plain string without caching", r.Body.System)
		}
	}
}

// Every effort the catalog offers each kind of model is one the fake
// takes, and thinking off is sent as each model takes it.
func TestFake_efforts(t *testing.T) {
	tests := []struct {
		model, style string
		efforts      []string
	}{
		{"claude-sonnet-4-5", ThinkingBudget, []string{"", "off", "low", "medium", "high"}},
		{"claude-haiku-4-5", ThinkingBudget, []string{"", "off", "low", "medium", "high"}},
		{"claude-opus-4-6", ThinkingBoth, []string{"", "off", "low", "medium", "high", "max"}},
		{"claude-opus-4-7", ThinkingAdaptive, []string{"", "off", "low", "medium", "high", "xhigh", "max"}},
		{"claude-sonnet-5", ThinkingAdaptiveOn, []string{"", "off", "low", "medium", "high", "xhigh", "max"}},
		{"claude-sonnet-5-5", ThinkingBetweenTools, []string{"", "off", "low", "medium", "high", "xhigh", "max"}},
		{"claude-opus-5-5", ThinkingAlways, []string{"", "low", "medium", "high", "xhigh", "max"}},
	}
	for _, tt := range tests {
		for _, effort := range tt.efforts {
			f := newFakeAPI(t, fakeText("ok"))
			m := fakeModel(f, tt.model, Options{Thinking: tt.style, Effort: effort})
			if _, _, err := call(m, simpleRequest); err != nil {
				t.Errorf("%s at %q: %v", tt.model, effort, err)
				continue
			}
			th := f.Requests()[0].Body.Thinking
			switch {
			case effort == "off" && tt.style == ThinkingAdaptiveOn:
				if th == nil || th.Type != "disabled" {
					t.Errorf("%s off: thinking %+v, want disabled", tt.model, th)
				}
			case effort == "off" && tt.style == ThinkingBetweenTools:
				if th == nil || th.Type != "between_tools" {
					t.Errorf("%s off: thinking %+v, want between_tools", tt.model, th)
				}
			case effort == "off" || effort == "" && (tt.style == ThinkingBudget || tt.style == ThinkingBoth || tt.style == ThinkingAdaptive):
				if th != nil {
					t.Errorf("%s at %q: thinking %+v sent", tt.model, effort, th)
				}
			case tt.style == ThinkingBudget:
				if th == nil || th.Type != "enabled" || th.BudgetTokens < 1024 {
					t.Errorf("%s at %q: thinking %+v", tt.model, effort, th)
				}
			default:
				if th == nil || th.Type != "adaptive" {
					t.Errorf("%s at %q: thinking %+v", tt.model, effort, th)
				}
			}
		}
	}
}

// What the fake refuses: a budget to a model that thinks adaptively only
// (the 400 coda met before the catalog knew), "disabled" where thinking
// cannot stop, an effort a model lacks. The provider, told the model's
// thinking, sends none of them.
func TestFake_refusals(t *testing.T) {
	tests := []struct {
		model   string
		opts    Options
		refusal string
	}{
		{"claude-opus-4-7", Options{ThinkingBudget: 4096}, `"thinking.type.enabled" is not supported for this model. Use "thinking.type.adaptive" and "output_config.effort"`},
		{"claude-opus-5-5", Options{Thinking: ThinkingAdaptiveOn, Effort: "off"}, `"thinking.type.disabled" is not supported for this model.`},
		{"claude-sonnet-5-5", Options{Thinking: ThinkingAdaptiveOn, Effort: "off"}, `"thinking.type.disabled" is not supported for this model. Use "thinking.type.between_tools"`},
		{"claude-opus-4-6", Options{Thinking: ThinkingBoth, Effort: "xhigh"}, "output_config.effort: Input should be low, medium, high, max"},
		{"claude-sonnet-4-5", Options{Effort: "high"}, `"thinking.type.adaptive" is not supported for this model.`},
	}
	for _, tt := range tests {
		f := newFakeAPI(t, fakeText("ok"))
		_, _, err := call(fakeModel(f, tt.model, tt.opts), simpleRequest)
		if err == nil || !strings.Contains(err.Error(), "HTTP 400 Bad Request: "+tt.refusal) {
			t.Errorf("%s %+v: %v, want the fake's %q", tt.model, tt.opts, err, tt.refusal)
		}
	}
	// Told the model thinks adaptively, a configured budget is dropped
	// with one warning, and the call goes through.
	var log bytes.Buffer
	f := newFakeAPI(t, fakeText("ok"))
	m := fakeModel(f, "claude-opus-4-7", Options{Thinking: ThinkingAdaptive, ThinkingBudget: 4096, Effort: "medium", Log: slog.New(slog.NewTextHandler(&log, nil))})
	for range 2 {
		if _, _, err := call(m, simpleRequest); err != nil {
			t.Fatal(err)
		}
	}
	if n := strings.Count(log.String(), "thinking_budget is not taken"); n != 1 {
		t.Errorf("warned %d times: %s", n, log.String())
	}
}

// A forced tool is sent only where the API takes it: thinking off, on a
// model that takes one. With thinking on, or on a model that never takes
// one, the request asks for auto (and the fake, which refuses a forced
// tool with thinking on, takes it).
func TestFake_toolChoice(t *testing.T) {
	tests := []struct {
		model  string
		opts   Options
		choice string
	}{
		{"claude-sonnet-4-5", Options{Thinking: ThinkingBudget}, "tool"},
		{"claude-sonnet-4-5", Options{Thinking: ThinkingBudget, Effort: "low"}, "auto"},
		{"claude-opus-4-7", Options{Thinking: ThinkingAdaptive}, "tool"},
		{"claude-opus-4-7", Options{Thinking: ThinkingAdaptive, Effort: "high"}, "auto"},
		{"claude-sonnet-5", Options{Thinking: ThinkingAdaptiveOn}, "auto"}, // it thinks by default
		{"claude-sonnet-5", Options{Thinking: ThinkingAdaptiveOn, Effort: "off"}, "tool"},
		{"claude-sonnet-5-5", Options{Thinking: ThinkingBetweenTools, Effort: "off", NoForcedTool: true}, "auto"},
		{"claude-opus-5-5", Options{Thinking: ThinkingAlways, NoForcedTool: true}, "auto"},
	}
	for _, tt := range tests {
		f := newFakeAPI(t, fakeText("ok"))
		req := &llm.Request{Messages: simpleRequest.Messages, Tools: []llm.ToolSpec{{Name: "read_file"}, {Name: "submit_output"}}, ToolChoice: "submit_output"}
		if _, _, err := call(fakeModel(f, tt.model, tt.opts), req); err != nil {
			t.Errorf("%s %+v: %v", tt.model, tt.opts, err)
			continue
		}
		tc := f.Requests()[0].Body.ToolChoice
		if tc == nil || tc.Type != tt.choice || tt.choice == "tool" && tc.Name != "submit_output" {
			t.Errorf("%s %+v: tool_choice %+v, want %s", tt.model, tt.opts, tc, tt.choice)
		}
	}
	// The fake's rule, met by a provider told nothing of Sonnet 5's
	// thinking by default.
	f := newFakeAPI(t, fakeText("ok"))
	req := &llm.Request{Messages: simpleRequest.Messages, Tools: []llm.ToolSpec{{Name: "submit_output"}}, ToolChoice: "submit_output"}
	_, _, err := call(fakeModel(f, "claude-sonnet-5", Options{}), req)
	if err == nil || !strings.Contains(err.Error(), "Thinking may not be enabled when tool_choice forces tool use.") {
		t.Errorf("error %v", err)
	}
	var me *llm.MechanismError
	if !errors.As(err, &me) || me.Mechanism != "tool_choice" {
		t.Errorf("%v is not a tool_choice MechanismError", err)
	}
}

// Strict tools and a JSON output go as the API documents them; a 400
// naming either is a MechanismError, for the engine to try a weaker one.
func TestFake_strictAndFormat(t *testing.T) {
	f := newFakeAPI(t, fakeText(`{"ok":true}`))
	m := fakeModel(f, "claude-opus-4-7", Options{Thinking: ThinkingAdaptive})
	req := &llm.Request{
		Messages: simpleRequest.Messages,
		Tools:    []llm.ToolSpec{{Name: "submit_output", Schema: json.RawMessage(`{"type":"object","properties":{"content":{"type":"string"}},"required":["content"],"additionalProperties":false}`), Strict: true}},
		Reply:    &llm.ReplyFormat{Name: "answer", Schema: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"],"additionalProperties":false}`)},
	}
	if resp, _, err := call(m, req); err != nil || resp.Text != `{"ok":true}` {
		t.Fatalf("%+v %v", resp, err)
	}
	got := f.Requests()[0].Body
	if got.OutputConfig == nil || got.OutputConfig.Format == nil || got.OutputConfig.Format.Type != "json_schema" || !strings.Contains(string(got.OutputConfig.Format.Schema), `"ok"`) {
		t.Errorf("output_config %+v", got.OutputConfig)
	}
	if !strings.Contains(string(got.Tools[0]), `"strict":true`) {
		t.Errorf("tool %s", got.Tools[0])
	}

	// The fake refuses a strict tool whose schema leaves objects open.
	open := &llm.Request{Messages: simpleRequest.Messages, Tools: []llm.ToolSpec{{Name: "submit_output", Schema: json.RawMessage(`{"type":"object"}`), Strict: true}}}
	_, _, err := call(m, open)
	var me *llm.MechanismError
	if !errors.As(err, &me) || me.Mechanism != "strict" || !strings.Contains(err.Error(), "additionalProperties") {
		t.Errorf("strict refused: %v", err)
	}

	for _, tt := range []struct {
		msg, mechanism string
		req            *llm.Request
	}{
		{"output_config.format.schema: For 'object' type, property 'x' is not supported", "reply_format", req},
		{"Structured outputs are not supported for this model", "reply_format", req},
		{"prompt is too long: 210000 tokens > 200000 maximum", "", req},
		{"output_config.format: not supported", "", &llm.Request{Messages: simpleRequest.Messages}},
	} {
		s := newServer(t, reply{status: 400, body: `{"type":"error","error":{"type":"invalid_request_error","message":"` + tt.msg + `"}}`})
		var waits int
		_, _, err := collect(t, newModel(s, &waits), tt.req)
		var me *llm.MechanismError
		switch {
		case err == nil:
			t.Errorf("%q: no error", tt.msg)
		case tt.mechanism == "" && errors.As(err, &me):
			t.Errorf("%q: %v is a MechanismError", tt.msg, err)
		case tt.mechanism != "" && (!errors.As(err, &me) || me.Mechanism != tt.mechanism):
			t.Errorf("%q: %v, want a %s MechanismError", tt.msg, err, tt.mechanism)
		}
	}
}

// afterCalls is req with resp's calls answered, as the stage loop adds
// them.
func afterCalls(req *llm.Request, resp *llm.Response) *llm.Request {
	req.Messages = append(req.Messages, llm.Message{Role: llm.RoleAssistant, Text: resp.Text, Thinking: resp.Thinking, ToolCalls: resp.ToolCalls, Replay: resp.Replay})
	for _, tc := range resp.ToolCalls {
		req.Messages = append(req.Messages, llm.Message{Role: llm.RoleTool, ToolCallID: tc.ID, ToolName: tc.Name, Text: "ok"})
	}
	return req
}

// A reply of another model goes back without its thinking, which the
// fake would refuse as another's signature. Since a tool loop continued
// with thinking on must start its last assistant message with thinking
// (the fake refuses it otherwise), the call that takes over another
// model's loop is made without thinking where the model can turn it off
// (sent as each model takes "off"), and with the loop written out as text
// where it cannot.
func TestFake_thinkingStaysWithItsModel(t *testing.T) {
	tests := []struct {
		model, style string
		thinking     string // the takeover's thinking type, "" none
		folded       bool
	}{
		{"claude-sonnet-5", ThinkingAdaptiveOn, "disabled", false},
		{"claude-opus-4-6", ThinkingBoth, "", false},
		{"claude-sonnet-4-5", ThinkingBudget, "", false},
		{"claude-opus-5-5", ThinkingAlways, "adaptive", true},
		{"claude-sonnet-5-5", ThinkingBetweenTools, "adaptive", true},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			f := newFakeAPI(t, interleaved(1), fakeText("Safe."), fakeText("Sure."))
			opus := fakeModel(f, "claude-opus-4-7", Options{Thinking: ThinkingAdaptive, Effort: "high"})
			req := loopRequest()
			resp, _, err := call(opus, req)
			if err != nil {
				t.Fatal(err)
			}
			req = afterCalls(req, resp)
			next := fakeModel(f, tt.model, Options{Thinking: tt.style, Effort: "high"})
			if _, _, err := call(next, req); err != nil {
				t.Fatalf("%s after opus: %v", tt.model, err)
			}
			body := f.Requests()[1].Body
			sent := body.Messages[1].Blocks()
			var types []string
			for _, b := range sent {
				types = append(types, b.Type)
			}
			want := "text,tool_use,tool_use"
			if tt.folded {
				want = "text,text,text"
			}
			if got := strings.Join(types, ","); got != want {
				t.Errorf("opus's reply went to %s as %s, want %s", tt.model, got, want)
			}
			got := ""
			if body.Thinking != nil {
				got = body.Thinking.Type
			}
			if got != tt.thinking {
				t.Errorf("thinking %q, want %q", got, tt.thinking)
			}
			// The loop's next call, on a reply of its own, thinks again.
			req.Messages = append(req.Messages, llm.Message{Role: llm.RoleAssistant, Text: "Safe."}, llm.Message{Role: llm.RoleUser, Text: "And the tests?"})
			if _, _, err := call(next, req); err != nil {
				t.Fatal(err)
			}
			if th := f.Requests()[2].Body.Thinking; th == nil || th.Type == "disabled" {
				t.Errorf("the turn after: thinking %+v", th)
			}
		})
	}
}

// The fake holds a tool loop continued with thinking on to the API's
// rule: the loop's assistant message goes back starting with its
// thinking. A reply it wrote without thinking (adaptive thinking may skip
// it) is let through, and the provider keeps thinking on for it.
func TestFake_thinkingFirst(t *testing.T) {
	f := newFakeAPI(t, interleaved(1), anthropictest.Turn{Blocks: []anthropictest.Block{anthropictest.ToolUse("toolu_plain", "list_files", "")}}, fakeText("Safe."))
	m := fakeModel(f, "claude-opus-4-7", Options{Thinking: ThinkingAdaptive, Effort: "high"})
	req := loopRequest()
	resp, _, err := call(m, req)
	if err != nil {
		t.Fatal(err)
	}
	// Its thinking dropped (no replay): refused, as the API refuses it.
	// (The provider, not knowing the message, would turn thinking off:
	// the fake is asked with it on.)
	var r request
	m.encodeWith(afterCalls(loopRequest(), &llm.Response{Text: resp.Text, ToolCalls: resp.ToolCalls}), nil, &r)
	r.Thinking = &thinking{Type: "adaptive"}
	body, _ := json.Marshal(&r)
	if got := post(t, f, string(body)); !strings.Contains(got, "Expected `thinking` or `redacted_thinking`, but found `text`. When `thinking` is enabled, a final `assistant` message must start with a thinking block") {
		t.Errorf("the loop without its thinking: %s", got)
	}
	// Sent back whole, it is taken; then a reply without thinking, whose
	// loop goes on with thinking on.
	req = afterCalls(req, resp)
	resp, _, err = call(m, req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Thinking != "" || len(resp.ToolCalls) != 1 {
		t.Fatalf("second reply %+v", resp)
	}
	if _, _, err := call(m, afterCalls(req, resp)); err != nil {
		t.Fatalf("a loop of a reply without thinking: %v (refused: %v)", err, f.Refusals())
	}
	if th := f.Requests()[len(f.Requests())-1].Body.Thinking; th == nil || th.Type != "adaptive" {
		t.Errorf("thinking %+v after a reply of its own without thinking", th)
	}
}

// The fake's cache rules are not vacuous: five breakpoints, or one on a
// thinking block, are refused.
func TestFake_cacheRules(t *testing.T) {
	f := newFakeAPI(t, anthropictest.Turn{Blocks: []anthropictest.Block{anthropictest.Thinking("t"), anthropictest.Text("ok")}})
	post := func(body string) string { return post(t, f, body) }
	first := post(`{"model":"claude-opus-4-7","max_tokens":10,"messages":[{"role":"user","content":[{"type":"text","text":"a"}]}]}`)
	m := regexp.MustCompile(`"signature":"([^"]+)"`).FindStringSubmatch(first)
	if m == nil {
		t.Fatalf("no signature in %s", first)
	}
	cc := `"cache_control":{"type":"ephemeral"}`
	five := `{"model":"claude-opus-4-7","max_tokens":10,"system":[{"type":"text","text":"s",` + cc + `}],"tools":[{"name":"a","input_schema":{"type":"object"},` + cc + `}],"messages":[` +
		`{"role":"user","content":[{"type":"text","text":"a",` + cc + `},{"type":"text","text":"b",` + cc + `},{"type":"text","text":"c",` + cc + `}]}]}`
	if got := post(five); !strings.Contains(got, "A maximum of 4 blocks with cache_control may be provided. Found 5.") {
		t.Errorf("five breakpoints: %s", got)
	}
	onThinking := `{"model":"claude-opus-4-7","max_tokens":10,"messages":[{"role":"user","content":[{"type":"text","text":"a"}]},` +
		`{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"` + m[1] + `",` + cc + `},{"type":"text","text":"x"}]},{"role":"user","content":[{"type":"text","text":"b"}]}]}`
	if got := post(onThinking); !strings.Contains(got, "Thinking blocks cannot be cached directly") {
		t.Errorf("a breakpoint on thinking: %s", got)
	}
}

// post sends body to the fake's /v1/messages as it is, and returns what
// the fake answered.
func post(t *testing.T, f *anthropictest.Server, body string) string {
	t.Helper()
	r, _ := http.NewRequest(http.MethodPost, f.URL+"/v1/messages", strings.NewReader(body))
	r.Header.Set("X-Api-Key", testKey)
	r.Header.Set("Anthropic-Version", Version)
	resp, err := f.Client().Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// The fake holds a strict tool's schema, and a JSON output's, to the
// subset of structured outputs at every level, not only the top: an open
// object anywhere, a constraint the subset does not take, a recursive
// definition are refused; what the subset takes passes.
func TestFake_strictSchemas(t *testing.T) {
	closed := func(props string) string {
		return `{"type":"object","properties":{` + props + `},"additionalProperties":false}`
	}
	tests := []struct {
		name, schema, refusal string // refusal "": taken
	}{
		{"flat", closed(`"a":{"type":"string"}`), ""},
		{"nested closed, with what the subset takes", `{"type":"object","title":"T","description":"d","properties":{` +
			`"a":{"type":"object","properties":{"b":{"type":"string","format":"date","pattern":"^[0-9]+$"}},"required":["b"],"additionalProperties":false},` +
			`"c":{"type":"array","minItems":1,"items":{"$ref":"#/$defs/item"}},"d":{"anyOf":[{"type":"null"},{"enum":["x",1,true,null]}]},"e":{"const":"k","default":"k"}},` +
			`"required":["a"],"additionalProperties":false,"$defs":{"item":` + closed(`"n":{"type":"integer"}`) + `}}`, ""},
		{"nested open object", closed(`"a":{"type":"object","properties":{"b":{"type":"string"}}}`), "properties.a: For 'object' type, 'additionalProperties' must be explicitly set to false"},
		{"open object in items", closed(`"a":{"type":"array","items":{"type":"object"}}`), "properties.a.items: For 'object' type, 'additionalProperties' must be explicitly set to false"},
		{"open object in anyOf", closed(`"a":{"anyOf":[{"type":"string"},{"type":"object","additionalProperties":true}]}`), "properties.a.anyOf.1: For 'object' type"},
		{"open definition", closed(`"a":{"$ref":"#/$defs/x"}`)[:len(closed(`"a":{"$ref":"#/$defs/x"}`))-1] + `,"$defs":{"x":{"type":"object"}}}`, "$defs.x: For 'object' type"},
		{"minimum", closed(`"a":{"type":"integer","minimum":1}`), "properties.a: 'minimum' is not supported"},
		{"maxLength", closed(`"a":{"type":"string","maxLength":3}`), "properties.a: 'maxLength' is not supported"},
		{"minItems 2", closed(`"a":{"type":"array","minItems":2,"items":{"type":"string"}}`), "properties.a: 'minItems' values other than 0 or 1"},
		{"enum of objects", closed(`"a":{"enum":[{"x":1}]}`), "properties.a: enum values must be"},
		{"external ref", closed(`"a":{"$ref":"https://example.com/s.json"}`), `properties.a: $ref "https://example.com/s.json" is not supported`},
		{"format", closed(`"a":{"type":"string","format":"ipv5"}`), "properties.a: string format 'ipv5' is not supported"},
		{"lookahead", closed(`"a":{"type":"string","pattern":"(?=x)"}`), "properties.a: the pattern's (?= is not supported"},
		{"recursive", `{"type":"object","properties":{"n":{"$ref":"#/$defs/node"}},"additionalProperties":false,"$defs":{"node":` + closed(`"next":{"$ref":"#/$defs/node"}`) + `}}`, "Too many recursive definitions in schema"},
	}
	f := newFakeAPI(t, fakeText("ok"))
	for _, tt := range tests {
		for _, where := range []string{"tool", "output"} {
			body := `{"model":"claude-sonnet-4-5","max_tokens":10,"messages":[{"role":"user","content":[{"type":"text","text":"a"}]}],` +
				`"tools":[{"name":"t","strict":true,"input_schema":` + tt.schema + `}]}`
			prefix := "tools.0.custom.input_schema: "
			if where == "output" {
				body = `{"model":"claude-sonnet-4-5","max_tokens":10,"messages":[{"role":"user","content":[{"type":"text","text":"a"}]}],` +
					`"output_config":{"format":{"type":"json_schema","schema":` + tt.schema + `}}}`
				prefix = "output_config.format.schema: "
			}
			var e struct {
				Error struct{ Message string } `json:"error"`
			}
			json.Unmarshal([]byte(post(t, f, body)), &e)
			got := e.Error.Message
			switch {
			case tt.refusal == "" && got != "":
				t.Errorf("%s (%s): refused: %s", tt.name, where, got)
			case tt.refusal != "" && !strings.Contains(got, prefix+tt.refusal):
				t.Errorf("%s (%s): %s, want %q", tt.name, where, got, prefix+tt.refusal)
			}
		}
	}
}

// A stage's parameters reach the Messages API under its names (max_tokens,
// stop_sequences); one it does not take (seed) is refused by name, for the
// engine to drop.
func TestModel_params(t *testing.T) {
	f := anthropictest.NewServer()
	t.Cleanup(f.Close)
	m := New("claude-sonnet-5", Options{BaseURL: f.URL, Client: f.Client(), Retry: sse.Retry{Tries: 1}})
	req := &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Text: "hi"}},
		Params: map[string]any{"temperature": 0.5, "top_k": int64(20), "max_output_tokens": int64(2048), "stop": "END"}}
	if _, err := m.Stream(context.Background(), req, func(llm.Delta) error { return nil }); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	json.Unmarshal(f.Requests()[0].Raw, &got)
	if got["temperature"] != 0.5 || got["top_k"] != 20.0 || got["max_tokens"] != 2048.0 || fmt.Sprint(got["stop_sequences"]) != "[END]" {
		t.Errorf("sent temperature %v, top_k %v, max_tokens %v, stop_sequences %v", got["temperature"], got["top_k"], got["max_tokens"], got["stop_sequences"])
	}
	req.Params = map[string]any{"seed": int64(3)}
	_, err := m.Stream(context.Background(), req, func(llm.Delta) error { return nil })
	var me *llm.MechanismError
	if !errors.As(err, &me) || me.Mechanism != llm.ParamMechanism("seed") {
		t.Errorf("seed: %v, want the parameter refused", err)
	}
}
