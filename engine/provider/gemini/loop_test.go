package gemini

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/provider/gemini/geminitest"
)

// The fake API these tests meet is geminitest's: it holds every request
// to the rules Google documents, and signs as Gemini 3 does.

func newFake(t *testing.T, key string, turns ...geminitest.Turn) *geminitest.Server {
	t.Helper()
	f := geminitest.NewServer()
	f.Key = key
	f.Reply = func(n int, r *geminitest.Request) geminitest.Turn { return turns[min(n, len(turns)-1)] }
	t.Cleanup(f.Close)
	return f
}

// fakeGemini is a model of the fake.
func fakeGemini(f *geminitest.Server, model string, opts Options) *Model {
	opts.BaseURL = f.URL
	if opts.APIKey == "" {
		opts.APIKey = testKey
	}
	opts.Client = f.Client()
	return New(model, opts)
}

func textReply(text string) geminitest.Turn { return geminitest.Turn{Text: text} }

// callsReply answers with a thought summary, then the calls named (the
// first signed, as Gemini signs parallel calls).
func callsReply(names ...string) geminitest.Turn {
	t := geminitest.Turn{Thought: "Planning the calls.", Usage: geminitest.Usage{Prompt: 100, Candidates: 20, Thoughts: 50, Cached: 64}}
	for i, n := range names {
		t.Calls = append(t.Calls, geminitest.Call{Name: n, Args: `{"n":` + string(rune('0'+i)) + `}`})
	}
	return t
}

// loop runs a tool loop as the stage engine does: each reply's message,
// with its Replay, then a result for each call, until a reply makes no
// call.
func loop(t *testing.T, m *Model, calls int) ([]*llm.Response, error) {
	t.Helper()
	req := &llm.Request{
		System:   "Use the tools.",
		Messages: []llm.Message{{Role: llm.RoleUser, Text: "Go."}},
		Tools:    []llm.ToolSpec{{Name: "a", Schema: json.RawMessage(`{"type":"object"}`)}, {Name: "b"}},
	}
	var out []*llm.Response
	for range calls + 1 {
		resp, _, err := collect(m, req)
		if err != nil {
			return out, err
		}
		out = append(out, resp)
		if len(resp.ToolCalls) == 0 {
			return out, nil
		}
		req.Messages = append(req.Messages, llm.Message{Role: llm.RoleAssistant, Text: resp.Text, Thinking: resp.Thinking, ToolCalls: resp.ToolCalls, Replay: resp.Replay})
		for _, tc := range resp.ToolCalls {
			req.Messages = append(req.Messages, llm.Message{Role: llm.RoleTool, ToolCallID: tc.ID, ToolName: tc.Name, Text: "ok"})
		}
	}
	t.Fatalf("the loop did not end after %d calls", calls)
	return nil, nil
}

// Sequential and parallel calls on every Gemini 3 model the fake knows:
// each step's signature goes back where it came, and the fake, which
// refuses a step without it, takes every request.
func TestFake_toolLoopSignatures(t *testing.T) {
	for _, model := range []string{"gemini-3-pro-preview", "gemini-3-flash-preview", "gemini-3.8-flash"} {
		t.Run(model, func(t *testing.T) {
			f := newFake(t, testKey, callsReply("a", "b"), callsReply("b"), textReply("Done."))
			m := fakeGemini(f, model, Options{Thinking: ThinkingLevel, Effort: llm.EffortLow})
			resps, err := loop(t, m, 3)
			if err != nil {
				t.Fatalf("%v (the fake refused: %v)", err, f.Refusals())
			}
			if len(resps) != 3 || resps[2].Text != "Done." {
				t.Fatalf("responses %+v", resps)
			}
			if r := resps[0]; r.Thinking != "Planning the calls." || r.Usage.CacheReadTokens != 64 || r.Usage.ReasoningTokens != 50 || r.Usage.OutputTokens != 70 {
				t.Errorf("first response %+v", r)
			}
			reqs := f.Requests()
			last := reqs[len(reqs)-1].Body
			// user, model (2 calls), user (2 results), model (1 call), user (1 result)
			if len(last.Contents) != 5 {
				t.Fatalf("contents %+v", last.Contents)
			}
			for _, i := range []int{1, 3} {
				parts := last.Contents[i].Parts
				if !parts[0].Thought || *parts[0].Text != "Planning the calls." {
					t.Errorf("contents[%d]: the thought summary does not go back first: %+v", i, parts[0])
				}
				if parts[1].FunctionCall == nil || parts[1].ThoughtSignature == "" || parts[1].ThoughtSignature == skipSignature {
					t.Errorf("contents[%d]: the first call lacks its own signature: %+v", i, parts[1])
				}
			}
			if p := last.Contents[1].Parts[2]; p.FunctionCall == nil || p.ThoughtSignature != "" {
				t.Errorf("the second parallel call gained a signature: %+v", p)
			}
			if tc := last.GenerationConfig.ThinkingConfig; tc == nil || tc.ThinkingLevel != "low" || !tc.IncludeThoughts {
				t.Errorf("thinkingConfig %+v", tc)
			}
		})
	}
}

// The fake holds the rule: a step sent back without its signature is
// refused with Google's 400, as a provider that dropped it would be.
func TestFake_refusesMissingSignature(t *testing.T) {
	f := newFake(t, testKey, callsReply("a"), textReply("Done."))
	// Told nothing of the model, the provider neither asks for thoughts
	// nor stands in a signature; and here it loses the Replay.
	m := fakeGemini(f, "gemini-3-pro-preview", Options{})
	resp, _, err := collect(m, &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Text: "Go."}}, Tools: []llm.ToolSpec{{Name: "a"}}})
	if err != nil {
		t.Fatal(err)
	}
	req := &llm.Request{
		Messages: []llm.Message{
			{Role: llm.RoleUser, Text: "Go."},
			{Role: llm.RoleAssistant, ToolCalls: resp.ToolCalls},
			{Role: llm.RoleTool, ToolCallID: resp.ToolCalls[0].ID, ToolName: "a", Text: "ok"},
		},
		Tools: []llm.ToolSpec{{Name: "a"}},
	}
	_, _, err = collect(m, req)
	if err == nil || !strings.Contains(err.Error(), "HTTP 400 Bad Request: Function call is missing a thought_signature in functionCall parts") {
		t.Fatalf("error %v, want the fake's missing-signature 400", err)
	}
	// With its Replay, the same step is taken.
	req.Messages[1].Replay = resp.Replay
	if _, _, err := collect(m, req); err != nil {
		t.Fatalf("with the Replay: %v", err)
	}
}

// A reply of one model sent to another (a stage's fallback) goes without
// the first model's signatures, which the second would refuse as
// corrupted: its first call carries the documented skip value.
func TestFake_signaturesStayWithTheirModel(t *testing.T) {
	f := newFake(t, testKey, callsReply("a"), textReply("Done."))
	pro := fakeGemini(f, "gemini-3-pro-preview", Options{Thinking: ThinkingLevel})
	flash := fakeGemini(f, "gemini-3-flash-preview", Options{Thinking: ThinkingLevel})
	base := []llm.Message{{Role: llm.RoleUser, Text: "Go."}}
	tools := []llm.ToolSpec{{Name: "a"}}
	resp, _, err := collect(pro, &llm.Request{Messages: base, Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	req := &llm.Request{Tools: tools, Messages: append(base,
		llm.Message{Role: llm.RoleAssistant, Text: resp.Text, Thinking: resp.Thinking, ToolCalls: resp.ToolCalls, Replay: resp.Replay},
		llm.Message{Role: llm.RoleTool, ToolCallID: resp.ToolCalls[0].ID, ToolName: "a", Text: "ok"})}
	if _, _, err := collect(flash, req); err != nil {
		t.Fatalf("flash after pro: %v", err)
	}
	reqs := f.Requests()
	parts := reqs[len(reqs)-1].Body.Contents[1].Parts
	if len(parts) != 1 || parts[0].ThoughtSignature != skipSignature {
		t.Errorf("parts sent to another model: %+v", parts)
	}

	// Pro's signature itself, sent to Flash, is what the fake refuses.
	b, _ := pro.encodeWith(req, nil)
	var body map[string]any
	json.Unmarshal(b, &body)
	if !strings.Contains(string(b), resp.ToolCalls[0].Name) {
		t.Fatal(string(b))
	}
	m := fakeGemini(f, "gemini-3-flash-preview", Options{Thinking: ThinkingLevel})
	m.model = "gemini-3-pro-preview" // encodes as Pro would, posts to Flash
	_, _, err = collect(m, req)
	if err == nil || !strings.Contains(err.Error(), "Corrupted thought signature") {
		t.Errorf("pro's signature sent to flash: %v", err)
	}
}

// The rules on thinking hold for what the provider sends, model by model,
// at every level the catalog offers.
func TestFake_thinkingLevels(t *testing.T) {
	tests := []struct {
		model, style string
		efforts      []string
	}{
		{"gemini-3-pro-preview", ThinkingLevel, []string{"", "low", "high"}},
		{"gemini-3-flash-preview", ThinkingLevel, []string{"", "minimal", "low", "medium", "high"}},
		{"gemini-3.8-flash", ThinkingLevel, []string{"", "low", "medium", "high"}},
		{"gemini-2.5-pro", ThinkingBudget, []string{"", "low", "medium", "high"}},
		{"gemini-2.5-flash", ThinkingBudget, []string{"", "off", "low", "medium", "high"}},
	}
	for _, tt := range tests {
		for _, effort := range tt.efforts {
			f := newFake(t, testKey, textReply("ok"))
			m := fakeGemini(f, tt.model, Options{Thinking: tt.style, Effort: effort})
			if _, _, err := collect(m, simpleRequest); err != nil {
				t.Errorf("%s at %q: %v", tt.model, effort, err)
			}
		}
	}
	// What the fake refuses, the catalog does not offer.
	for _, tt := range []struct{ model, style, effort, refusal string }{
		{"gemini-2.5-pro", ThinkingBudget, "off", "Budget 0 is invalid"},
		{"gemini-3.8-flash", ThinkingLevel, "minimal", `thinking_level "minimal" is not supported`},
		{"gemini-2.5-flash", ThinkingLevel, "low", "thinking_level is not supported by this model"},
	} {
		f := newFake(t, testKey, textReply("ok"))
		m := fakeGemini(f, tt.model, Options{Thinking: tt.style, Effort: tt.effort})
		if _, _, err := collect(m, simpleRequest); err == nil || !strings.Contains(err.Error(), tt.refusal) {
			t.Errorf("%s at %q: %v, want %q", tt.model, tt.effort, err, tt.refusal)
		}
	}
}

// A forced call and a shaped reply are sent as the fake takes them.
func TestFake_forcedAndShaped(t *testing.T) {
	f := newFake(t, testKey, callsReply("submit_output"), textReply(`{"ok":true}`))
	m := fakeGemini(f, "gemini-3-flash-preview", Options{Thinking: ThinkingLevel})
	forced := &llm.Request{Messages: simpleRequest.Messages, Tools: []llm.ToolSpec{{Name: "read_file"}, {Name: "submit_output"}}, ToolChoice: "submit_output"}
	resp, _, err := collect(m, forced)
	if err != nil || len(resp.ToolCalls) != 1 || resp.ToolCalls[0].Name != "submit_output" {
		t.Fatalf("forced: %+v, %v", resp, err)
	}
	shaped := &llm.Request{Messages: simpleRequest.Messages, Reply: &llm.ReplyFormat{Name: "answer", Schema: json.RawMessage(`{"type":"object"}`)}}
	if resp, _, err = collect(m, shaped); err != nil || resp.Text != `{"ok":true}` {
		t.Fatalf("shaped: %+v, %v", resp, err)
	}
	reqs := f.Requests()
	if tc := reqs[0].Body.ToolConfig; tc == nil || tc.FunctionCallingConfig.Mode != "ANY" || strings.Join(tc.FunctionCallingConfig.AllowedFunctionNames, ",") != "submit_output" {
		t.Errorf("toolConfig %+v", reqs[0].Body.ToolConfig)
	}
	if gc := reqs[1].Body.GenerationConfig; gc == nil || gc.ResponseMIMEType != "application/json" || string(gc.ResponseJSONSchema) != `{"type":"object"}` {
		t.Errorf("generationConfig %+v", reqs[1].Body.GenerationConfig)
	}
}

// A JSON reply beside function declarations is offered (Shapes) only to
// the models that take it, Gemini 3 and later: the fake, which refuses it
// as Gemini 2.x does, takes every request the provider offers to shape,
// and refuses the one it does not.
func TestFake_jsonWithTools(t *testing.T) {
	tools := []llm.ToolSpec{{Name: "read_file"}, {Name: "submit_output"}}
	reply := &llm.ReplyFormat{Name: "answer", Schema: json.RawMessage(`{"type":"object"}`)}
	for _, tt := range []struct {
		model string
		opts  Options
		takes bool
	}{
		{"gemini-3-flash-preview", Options{Thinking: ThinkingLevel}, true},
		{"gemini-3.8-flash", Options{Thinking: ThinkingLevel}, true},
		{"gemini-2.5-flash", Options{Thinking: ThinkingBudget}, false},
		{"gemini-2.5-pro", Options{Thinking: ThinkingBudget}, false},
	} {
		f := newFake(t, testKey, textReply(`{"ok":true}`))
		m := fakeGemini(f, tt.model, tt.opts)
		req := &llm.Request{Messages: simpleRequest.Messages, Tools: tools}
		sh := m.Shapes(req)
		if sh.Reply != tt.takes || sh.ReplyAny != tt.takes {
			t.Errorf("%s with tools: %+v, want a JSON reply %v", tt.model, sh, tt.takes)
		}
		if sh := m.Shapes(&llm.Request{Messages: simpleRequest.Messages}); !sh.Reply || !sh.ReplyAny {
			t.Errorf("%s without tools: %+v", tt.model, sh)
		}
		req.Reply = reply
		_, _, err := collect(m, req)
		if tt.takes && err != nil {
			t.Errorf("%s: %v", tt.model, err)
		}
		if !tt.takes && (err == nil || !strings.Contains(err.Error(), "Function calling with a response mime type: 'application/json' is unsupported")) {
			t.Errorf("%s: %v, want the fake's refusal", tt.model, err)
		}
	}
	for name, want := range map[string]bool{"gemini-3-pro-preview": true, "gemini-4-hydrogen": true, "gemini-2.0-flash": false, "gemini-1.5-pro": false, "gemini-flash-latest": true, "gemma-3-27b-it": true} {
		if got := jsonWithTools(name); got != want {
			t.Errorf("jsonWithTools(%q) = %v", name, got)
		}
	}
}
