package openai

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/provider/openai/openaitest"
	"github.com/coda-acp/coda/engine/provider/sse"
)

func TestNoEffortWithTools(t *testing.T) {
	for model, want := range map[string]bool{
		"gpt-5.4": true, "gpt-5.4-mini": true, "gpt-5.5": true, "gpt-5.6-terra": true, "openai/gpt-5.4": true, "gpt-6": true, "GPT-5.10": true,
		"gpt-5": false, "gpt-5.1": false, "gpt-5.2-codex": false, "gpt-4.1": false, "o3": false, "gpt-oss-120b": false, "qwen3": false,
	} {
		if got := noEffortWithTools(model); got != want {
			t.Errorf("noEffortWithTools(%q) = %v", model, got)
		}
	}
}

// Effort on chat completions: reasoning_effort as asked, "off" as "none",
// OpenRouter's reasoning.effort; with tools, a GPT-5.4 or later is sent
// "none" whatever was asked (it refuses anything else, and its default),
// said once.
func TestModel_effort(t *testing.T) {
	tools := []llm.ToolSpec{readTool}
	log, logs := logBuffer()
	tests := []struct {
		model, base, effort string
		tools               []llm.ToolSpec
		want                map[string]any // the fields about effort
	}{
		{"gpt-5.1", "", llm.EffortHigh, tools, map[string]any{"reasoning_effort": "high"}},
		{"gpt-5.1", "", llm.EffortOff, nil, map[string]any{"reasoning_effort": "none"}},
		{"gpt-5.1", "", "", tools, map[string]any{}},
		{"gpt-5.4", "", llm.EffortHigh, nil, map[string]any{"reasoning_effort": "high"}},
		{"gpt-5.4", "", llm.EffortHigh, tools, map[string]any{"reasoning_effort": "none"}},
		{"gpt-5.4", "", "", tools, map[string]any{"reasoning_effort": "none"}},
		{"gpt-5.4", "", llm.EffortXHigh, tools, map[string]any{"reasoning_effort": "none"}},
		{"openai/gpt-5.4", "https://openrouter.ai/api/v1", llm.EffortHigh, tools, map[string]any{"reasoning": map[string]any{"effort": "high"}}},
		{"qwen3", "http://localhost:8000/v1", llm.EffortLow, tools, map[string]any{"reasoning_effort": "low"}},
		// A model that does not reason is sent no effort, not even none:
		// OpenAI refuses the parameter for it.
		{"gpt-4.1", "", llm.EffortOff, tools, map[string]any{}},
		{"gpt-5-chat-latest", "", llm.EffortOff, nil, map[string]any{}},
		// Nor a level, where it is known not to reason, whatever asked it.
		{"gpt-4.1", "", llm.EffortHigh, tools, map[string]any{}},
		{"gpt-4.5-preview", "", llm.EffortLow, nil, map[string]any{}},
		{"openai/gpt-4o", "https://openrouter.ai/api/v1", llm.EffortHigh, nil, map[string]any{}},
	}
	for _, tt := range tests {
		m := New(tt.model, Options{BaseURL: tt.base, Log: log})
		raw, _, err := m.encode(&llm.Request{Messages: simpleRequest.Messages, Tools: tt.tools, Effort: tt.effort})
		if err != nil {
			t.Fatal(err)
		}
		var v map[string]any
		json.Unmarshal(raw, &v)
		got := map[string]any{}
		for _, k := range []string{"reasoning_effort", "reasoning"} {
			if x, ok := v[k]; ok {
				got[k] = x
			}
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s at %q, effort %q, %d tools (-want +got):\n%s", tt.model, tt.base, tt.effort, len(tt.tools), diff)
		}
	}
	if n := strings.Count(logs.String(), "does not reason: no reasoning effort is sent"); n != 3 {
		t.Errorf("said %d times that a model does not reason, want once per model asked for a level (3):\n%s", n, logs)
	}
	if n := strings.Count(logs.String(), "takes no reasoning effort with tools"); n != 2 {
		t.Errorf("said %d times, want once per model asked for a level (2):\n%s", n, logs)
	}
	// The provider's default effort serves a request that names none.
	m := New("gpt-5.1", Options{Effort: llm.EffortMedium})
	raw, _, _ := m.encode(simpleRequest)
	if !strings.Contains(string(raw), `"reasoning_effort":"medium"`) {
		t.Errorf("the default effort: %s", raw)
	}
}

// Against the fake, which refuses reasoning_effort for a model that does
// not reason, as OpenAI does: the provider sends it none, whatever level
// a request or the provider's default asks.
func TestModel_noEffortForAModelThatDoesNotReason(t *testing.T) {
	f := openaitest.NewServer()
	defer f.Close()
	for _, model := range []string{"gpt-4.1", "gpt-4o-mini", "gpt-5-chat-latest"} {
		for _, effort := range []string{llm.EffortOff, llm.EffortLow, llm.EffortHigh} {
			m := New(model, Options{BaseURL: f.URL, Client: f.Client(), Retry: sse.Retry{Tries: 1}, Effort: effort})
			for _, req := range []*llm.Request{
				{Messages: simpleRequest.Messages, Effort: effort},
				{Messages: simpleRequest.Messages, Tools: []llm.ToolSpec{readTool}},
			} {
				if _, _, err := streamOf(t, m, req); err != nil {
					t.Errorf("%s at %s: %v", model, effort, err)
				}
			}
		}
	}
	// The fake's rule is not vacuous.
	raw := `{"model":"gpt-4.1","messages":[{"role":"user","content":"hi"}],"reasoning_effort":"low","stream":true}`
	resp, err := f.Client().Post(f.URL+"/chat/completions", "application/json", strings.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if rs := f.Requests(); resp.StatusCode != 400 || rs[len(rs)-1].Refused != "Unsupported parameter: 'reasoning_effort' is not supported with this model." {
		t.Errorf("the fake took reasoning_effort for gpt-4.1: %d", resp.StatusCode)
	}
}

// Against the fake, which refuses a GPT-5.4 tool call with any effort but
// none: the provider's choice is what lets it through.
func TestModel_effortAgainstTheFake(t *testing.T) {
	f := openaitest.NewServer()
	defer f.Close()
	f.Reply = func(int, *openaitest.Request) openaitest.Turn { return openaitest.Turn{Text: "Fine."} }
	m := New("gpt-5.4", Options{BaseURL: f.URL, Client: f.Client(), Retry: sse.Retry{Tries: 1}})
	req := &llm.Request{Messages: simpleRequest.Messages, Tools: []llm.ToolSpec{readTool}, Effort: llm.EffortHigh}
	if _, _, err := streamOf(t, m, req); err != nil {
		t.Fatal(err)
	}
	// A model the provider does not know to refuse, which does: the 400 is
	// met once, the call made again with "none", and so from then on.
	f2 := openaitest.NewServer()
	defer f2.Close()
	f2.Reply = func(n int, r *openaitest.Request) openaitest.Turn {
		if r.Body["reasoning_effort"] != "none" {
			return openaitest.Turn{Status: 400, Body: `{"error":{"message":"Function tools with reasoning_effort are not supported for gpt-next in /v1/chat/completions. To use function tools, use /v1/responses or set reasoning_effort to 'none'.","type":"invalid_request_error","param":"reasoning_effort","code":null}}`}
		}
		return openaitest.Turn{Text: "Fine."}
	}
	log, logs := logBuffer()
	m = New("gpt-next", Options{BaseURL: f2.URL, Client: f2.Client(), Retry: sse.Retry{Tries: 1}, Log: log})
	for range 2 {
		resp, _, err := streamOf(t, m, req)
		if err != nil || resp.Text != "Fine." {
			t.Fatalf("%v, %v", resp, err)
		}
	}
	if n := len(f2.Requests()); n != 3 {
		t.Errorf("%d requests, want 3 (refused, again with none, then none at once)", n)
	}
	if n := strings.Count(logs.String(), "level=WARN"); n != 1 {
		t.Errorf("%d warnings:\n%s", n, logs)
	}
}

// The answer's mechanisms as chat completions takes them: strict tools,
// the named tool choice, response_format json_schema (strict only when
// asked) and json_object.
func TestModel_shaping(t *testing.T) {
	strictSchema := json.RawMessage(`{"type":"object","properties":{"content":{"type":"string"}},"required":["content"],"additionalProperties":false}`)
	req := &llm.Request{
		Messages:   simpleRequest.Messages,
		Tools:      []llm.ToolSpec{readTool, {Name: "submit_output", Schema: strictSchema, Strict: true}},
		ToolChoice: "submit_output",
		Reply:      &llm.ReplyFormat{Schema: strictSchema, Strict: true},
	}
	m := New("gpt-4o", Options{})
	raw, shaping, err := m.encode(req)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	json.Unmarshal(raw, &v)
	if !reflect.DeepEqual(shaping, sse.Shaping{Strict: true, ToolChoice: true, Reply: true}) {
		t.Errorf("shaping %+v", shaping)
	}
	tools := v["tools"].([]any)
	if f := tools[0].(map[string]any)["function"].(map[string]any); f["strict"] != nil {
		t.Errorf("a tool not strict is sent without strict: %v", f)
	}
	if f := tools[1].(map[string]any)["function"].(map[string]any); f["strict"] != true {
		t.Errorf("a strict tool: %v", f)
	}
	if diff := cmp.Diff(map[string]any{"type": "function", "function": map[string]any{"name": "submit_output"}}, v["tool_choice"]); diff != "" {
		t.Errorf("tool_choice (-want +got):\n%s", diff)
	}
	wantFormat := map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "answer", "strict": true,
		"schema": map[string]any{"type": "object", "properties": map[string]any{"content": map[string]any{"type": "string"}}, "required": []any{"content"}, "additionalProperties": false}}}
	if diff := cmp.Diff(wantFormat, v["response_format"]); diff != "" {
		t.Errorf("response_format (-want +got):\n%s", diff)
	}
	// A model the catalog says refuses a forced tool is asked in auto mode.
	raw, _, _ = New("anthropic/claude-sonnet-5.5", Options{NoForcedTool: true}).encode(req)
	if strings.Contains(string(raw), `"tool_choice"`) {
		t.Errorf("NoForcedTool: %s", raw)
	}
	raw, shaping, _ = m.encode(&llm.Request{Messages: simpleRequest.Messages, Reply: &llm.ReplyFormat{}, ToolChoice: "not_offered"})
	v = nil
	json.Unmarshal(raw, &v)
	if diff := cmp.Diff(map[string]any{"type": "json_object"}, v["response_format"]); diff != "" || v["tool_choice"] != nil || !reflect.DeepEqual(shaping, sse.Shaping{Reply: true}) {
		t.Errorf("json_object, a choice of a tool not offered dropped: %s %+v", raw, shaping)
	}
}

// The fake refuses each mechanism where OpenAI would; the provider says
// which as a *llm.MechanismError.
func TestModel_mechanismRefused(t *testing.T) {
	f := openaitest.NewServer()
	defer f.Close()
	m := New("gpt-4o", Options{BaseURL: f.URL, Client: f.Client(), Retry: sse.Retry{Tries: 1}})
	loose := json.RawMessage(`{"type":"object","properties":{"content":{"type":"string"},"tags":{"type":"array"}},"required":["content"]}`)
	for _, tt := range []struct {
		req  *llm.Request
		want string
	}{
		{&llm.Request{Messages: simpleRequest.Messages, Tools: []llm.ToolSpec{{Name: "submit_output", Schema: loose, Strict: true}}}, sse.MechanismStrict},
		{&llm.Request{Messages: simpleRequest.Messages, Reply: &llm.ReplyFormat{Schema: loose, Strict: true}}, sse.MechanismReply},
		{&llm.Request{Messages: simpleRequest.Messages, Reply: &llm.ReplyFormat{}}, sse.MechanismReply}, // no "json" in the messages
	} {
		_, _, err := streamOf(t, m, tt.req)
		var me *llm.MechanismError
		if !errors.As(err, &me) || me.Mechanism != tt.want {
			t.Errorf("err %v, want a %s refusal", err, tt.want)
		}
	}
	ok := &llm.Request{System: "Reply in JSON.", Messages: simpleRequest.Messages, Reply: &llm.ReplyFormat{}}
	if _, _, err := streamOf(t, m, ok); err != nil {
		t.Errorf("json_object with JSON named: %v", err)
	}
}

// Gemini's OpenAI endpoint: a tool call's thought signature, in its
// extra_content, is kept in the reply's Replay and sent back with the
// call; without it the fake, as Gemini 3 does, refuses the next call.
func TestModel_extraContent(t *testing.T) {
	s := newServer(t, reply{file: "gemini_signatures.sse"})
	resp, _, err := streamOf(t, newModel(s, &sleeps{}), simpleRequest)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"extra_content":{"function-call-1573892541":{"google":{"thought_signature":"CiQBVKhc7vB+ZmiIHXq3cf0="}}}}`; string(resp.Replay) != want {
		t.Errorf("replay %s", resp.Replay)
	}
	if len(resp.ToolCalls) != 2 || resp.Usage.ReasoningTokens != 61 {
		t.Errorf("%+v", resp)
	}
	for _, keep := range []bool{true, false} {
		f := openaitest.NewServer()
		f.Gemini = true
		f.Reply = func(n int, _ *openaitest.Request) openaitest.Turn {
			if n == 0 {
				return openaitest.Turn{Calls: []openaitest.Call{{Name: "read_file", Args: `{"path":"go.mod"}`}}}
			}
			return openaitest.Turn{Text: "Done."}
		}
		m := New("gemini-3-pro-preview", Options{BaseURL: f.URL, Client: f.Client(), Retry: sse.Retry{Tries: 1}})
		req := &llm.Request{Messages: simpleRequest.Messages, Tools: []llm.ToolSpec{readTool}}
		first, _, err := streamOf(t, m, req)
		if err != nil {
			t.Fatal(err)
		}
		msg := llm.Message{Role: llm.RoleAssistant, ToolCalls: first.ToolCalls}
		if keep {
			msg.Replay = first.Replay
		}
		req.Messages = append(req.Messages, msg, llm.Message{Role: llm.RoleTool, ToolCallID: first.ToolCalls[0].ID, Text: "module x"})
		_, _, err = streamOf(t, m, req)
		if keep && err != nil {
			t.Errorf("with the signature: %v", err)
		}
		if !keep && (err == nil || !strings.Contains(err.Error(), "thought_signature")) {
			t.Errorf("without it: %v", err)
		}
		f.Close()
	}
}

// A refusal is the reply's Refusal, not its text; a reply cut at the
// token limit says so; cached prompt tokens are counted.
func TestModel_refusalAndLength(t *testing.T) {
	s := newServer(t, reply{file: "refusal.sse"})
	resp, deltas, err := streamOf(t, newModel(s, &sleeps{}), simpleRequest)
	if err != nil {
		t.Fatal(err)
	}
	want := &llm.Response{Refusal: "I'm sorry, I cannot assist with that request.", StopReason: llm.StopRefusal,
		Usage: llm.Usage{InputTokens: 1530, OutputTokens: 12, CacheReadTokens: 1408, ContextWindow: 128000}}
	if diff := cmp.Diff(want, resp); diff != "" || len(deltas) != 0 {
		t.Errorf("refusal (-want +got):\n%s\ndeltas %v", diff, deltas)
	}
	f := openaitest.NewServer()
	defer f.Close()
	f.Reply = func(int, *openaitest.Request) openaitest.Turn {
		return openaitest.Turn{Reasoning: "Long answer.", Text: `{"a": [1, 2,`, Length: true, Usage: openaitest.Usage{Input: 10, Output: 4096, Reasoning: 3}}
	}
	resp, deltas, err = streamOf(t, New("gpt-5.1", Options{BaseURL: f.URL, Client: f.Client()}), simpleRequest)
	if err != nil || resp.StopReason != llm.StopMaxTokens || resp.Text != `{"a": [1, 2,` || resp.Thinking != "Long answer." || resp.Usage.ReasoningTokens != 3 {
		t.Errorf("cut: %+v %v", resp, err)
	}
	if len(deltas) == 0 || deltas[0].Thinking != "Long " {
		t.Errorf("deltas %v", deltas)
	}
}

// A constrained reply goes in the server's own field where the config
// names the server (vLLM's structured_outputs, llama.cpp's json_schema),
// else in response_format; the fake of each server takes it, and a
// server that refuses it is a reply-format MechanismError the engine
// falls back from.
func TestModel_serverReplyFields(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer","minimum":1}},"required":["n"]}`)
	tests := []struct {
		server      string
		schema      json.RawMessage
		want, wantN string // a field the body has, and one it lacks
	}{
		{"vllm", schema, `"structured_outputs":{"json":` + string(schema) + `}`, `"response_format"`},
		{"vllm", nil, `"structured_outputs":{"json_object":true}`, `"response_format"`},
		{"llama.cpp", schema, `"json_schema":` + string(schema), `"response_format"`},
		{"llama.cpp", nil, `"response_format":{"type":"json_object"}`, `"json_schema"`},
		{"", schema, `"response_format":{"type":"json_schema","json_schema":{"name":"answer","schema":` + string(schema) + `}}`, `"structured_outputs"`},
	}
	for _, tt := range tests {
		f := openaitest.NewServer()
		f.Server = tt.server
		m := New("qwen3", Options{BaseURL: f.URL, Client: f.Client(), Retry: sse.Retry{Tries: 1}, Server: tt.server})
		req := &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Text: "Answer in JSON."}}, Reply: &llm.ReplyFormat{Name: "answer", Schema: tt.schema}}
		if _, _, err := streamOf(t, m, req); err != nil {
			t.Errorf("%q, schema %s: %v", tt.server, tt.schema, err)
		}
		body := string(f.Requests()[0].Raw)
		if !strings.Contains(body, tt.want) || strings.Contains(body, tt.wantN) {
			t.Errorf("%q, schema %s: want %s and no %s in\n%s", tt.server, tt.schema, tt.want, tt.wantN, body)
		}
		// A server that cannot constrain the reply refuses it: the reply's
		// mechanism, which the engine asks again without.
		f.NoResponseFormat = true
		_, _, err := streamOf(t, m, req)
		var me *llm.MechanismError
		if !errors.As(err, &me) || me.Mechanism != sse.MechanismReply {
			t.Errorf("%q, schema %s, refused: %v, want a reply-format MechanismError", tt.server, tt.schema, err)
		}
		f.Close()
	}
}

// The fakes' rules for the servers' own fields are not vacuous.
func TestFake_serverFields(t *testing.T) {
	for _, tt := range []struct{ server, body, refusal string }{
		{"vllm", `"structured_outputs":{"json":{},"regex":"a+"}`, "You can only use one kind of structured outputs constraint"},
		{"vllm", `"structured_outputs":{}`, "You must use one kind of structured outputs constraint"},
		{"llama.cpp", `"json_schema":{},"grammar":"root ::= \"a\""`, "Cannot use both json_schema and grammar"},
		{"llama.cpp", `"grammar":"root ::= \"a\"","tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}]`, "Cannot specify grammar with tools"},
		{"", `"structured_outputs":{"json":{}}`, "Unrecognized request argument supplied: structured_outputs"},
		{"", `"json_schema":{}`, "Unrecognized request argument supplied: json_schema"},
	} {
		f := openaitest.NewServer()
		f.Server = tt.server
		resp, err := f.Client().Post(f.URL+"/chat/completions", "application/json",
			strings.NewReader(`{"model":"qwen3","stream":true,"messages":[{"role":"user","content":"hi"}],`+tt.body+`}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := f.Requests()[0].Refused; resp.StatusCode != 400 || !strings.HasPrefix(got, tt.refusal) {
			t.Errorf("%q %s: %d %q, want %q", tt.server, tt.body, resp.StatusCode, got, tt.refusal)
		}
		f.Close()
	}
}
