package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/provider/openai/openaitest"
	"github.com/coda-acp/coda/engine/provider/sse"
)

// streamOf streams req from any model and returns the response and deltas.
func streamOf(t *testing.T, m llm.Model, req *llm.Request) (*llm.Response, []llm.Delta, error) {
	t.Helper()
	var deltas []llm.Delta
	resp, err := m.Stream(context.Background(), req, func(d llm.Delta) error {
		deltas = append(deltas, d)
		return nil
	})
	return resp, deltas, err
}

func newResponses(s *server, model string) *Responses {
	return NewResponses(model, Options{BaseURL: s.URL + "/v1", APIKey: testKey, Client: s.Client(), Retry: sse.Retry{Sleep: (&sleeps{}).sleep}, ContextWindow: 400000})
}

// The recorded streams of the Responses API's reference (testdata/
// responses_*.sse) read into the reply they hold.
func TestResponses_Stream(t *testing.T) {
	tests := []struct {
		file       string
		want       *llm.Response
		deltas     []llm.Delta
		wantReplay string
	}{{
		file:   "responses_text.sse",
		want:   &llm.Response{Text: "Hi there!", StopReason: llm.StopEndTurn, Usage: llm.Usage{InputTokens: 37, OutputTokens: 11, ContextWindow: 400000}},
		deltas: []llm.Delta{{Text: "Hi"}, {Text: " there!"}},
		// No reasoning: the message's id is kept for nothing to pair with,
		// but harmless.
		wantReplay: `{"model":"gpt-5.4","items":[{"type":"message","id":"msg_67c9fdcf37fc8190ba82116e"}]}`,
	}, {
		file: "responses_reasoning_tools.sse",
		want: &llm.Response{
			Thinking:   "**Checking the weather** for Paris.\n\nCalling the tool.",
			ToolCalls:  []llm.ToolCall{{ID: "call_12345xyz", Name: "get_weather", Arguments: json.RawMessage(`{"location":"Paris, France"}`)}},
			StopReason: llm.StopToolUse,
			Usage:      llm.Usage{InputTokens: 291, OutputTokens: 77, CacheReadTokens: 128, ReasoningTokens: 64, ContextWindow: 400000},
		},
		deltas: []llm.Delta{{Thinking: "**Checking the weather**"}, {Thinking: " for Paris."}, {Thinking: "\n\nCalling the tool."}},
		wantReplay: `{"model":"gpt-5.4","items":[{"id":"rs_0a1b2c","type":"reasoning","encrypted_content":"gAAAAABpF_enc0a1b2c==","summary":[{"type":"summary_text","text":"**Checking the weather** for Paris."},{"type":"summary_text","text":"Calling the tool."}]},` +
			`{"type":"function_call","id":"fc_12345xyz","call_id":"call_12345xyz"}]}`,
	}, {
		file:       "responses_incomplete.sse",
		want:       &llm.Response{Text: `{"findings": [{"file": "a.go"`, StopReason: llm.StopMaxTokens, Usage: llm.Usage{InputTokens: 40, OutputTokens: 16, ContextWindow: 400000}},
		deltas:     []llm.Delta{{Text: `{"findings": [{"file": "a.go"`}},
		wantReplay: `{"model":"gpt-5.4","items":[{"type":"message","id":"msg_cut"}]}`,
	}, {
		// A refusal is not text: nothing streams, and the reply says it.
		file:       "responses_refusal.sse",
		want:       &llm.Response{Refusal: "I'm sorry, I can't help with that.", StopReason: llm.StopRefusal, Usage: llm.Usage{InputTokens: 20, OutputTokens: 9, ContextWindow: 400000}},
		wantReplay: `{"model":"gpt-5.4","items":[{"type":"message","id":"msg_ref"}]}`,
	}}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			s := newServer(t, reply{file: tt.file})
			resp, deltas, err := streamOf(t, newResponses(s, "gpt-5.4"), simpleRequest)
			if err != nil {
				t.Fatal(err)
			}
			if string(resp.Replay) != tt.wantReplay {
				t.Errorf("replay %s\nwant   %s", resp.Replay, tt.wantReplay)
			}
			resp.Replay = nil
			if diff := cmp.Diff(tt.want, resp); diff != "" {
				t.Errorf("response (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.deltas, deltas); diff != "" {
				t.Errorf("deltas (-want +got):\n%s", diff)
			}
		})
	}
}

// A failure the server reports in the stream ends the call with its
// message: response.failed with a server error is tried again while
// nothing was shown, an error event about the prompt is not.
func TestResponses_Stream_errors(t *testing.T) {
	s := newServer(t, reply{file: "responses_failed.sse"})
	_, _, err := streamOf(t, newResponses(s, "gpt-5.4"), simpleRequest)
	if err == nil || !strings.Contains(err.Error(), "The model produced invalid content.") || s.count() != 4 {
		t.Errorf("response.failed: %v after %d tries, want 4", err, s.count())
	}
	s = newServer(t, reply{file: "responses_error.sse"})
	_, _, err = streamOf(t, newResponses(s, "gpt-5.4"), simpleRequest)
	if err == nil || !strings.Contains(err.Error(), "Invalid prompt: your prompt was flagged.") || s.count() != 1 {
		t.Errorf("error event: %v after %d tries, want 1", err, s.count())
	}
	s = newServer(t, reply{body: "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{}}\n\n"})
	_, _, err = streamOf(t, newResponses(s, "gpt-5.4"), simpleRequest)
	if err == nil || !strings.Contains(err.Error(), "ended before the reply was complete") {
		t.Errorf("a stream without its end: %v", err)
	}
}

// The request body: stateless, reasoning asked with its summary, tools
// strict only when they say so (the API's default is strict, so the
// others say false), the named tool choice, the reply's format (strict
// only when asked: its default is not), images as data URLs.
func TestResponses_request(t *testing.T) {
	s := newServer(t, reply{file: "responses_text.sse"})
	m := newResponses(s, "gpt-5.4")
	m.opts.MaxTokens = 2000
	req := &llm.Request{
		System: "Be brief.",
		Messages: []llm.Message{
			{Role: llm.RoleUser, Text: "What does it show?", Images: []llm.Image{{MIMEType: "image/png", Data: []byte("png")}}},
			{Role: llm.RoleAssistant, Text: "Looking.", ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "read_file", Arguments: json.RawMessage(`{"path":"a"}`)}}},
			{Role: llm.RoleTool, ToolCallID: "call_1", ToolName: "read_file", Text: "no such file", IsError: true},
		},
		Tools: []llm.ToolSpec{
			{Name: "read_file", Description: "Read a file.", Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)},
			{Name: "submit_output", Schema: json.RawMessage(`{"type":"object","properties":{"content":{"type":"string"}},"required":["content"],"additionalProperties":false}`), Strict: true},
		},
		ToolChoice: "submit_output",
		Effort:     llm.EffortHigh,
		Reply:      &llm.ReplyFormat{Name: "my answer", Schema: json.RawMessage(`{"type":"object"}`)},
	}
	if _, _, err := streamOf(t, m, req); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	json.Unmarshal(s.requests[0].body, &got)
	want := map[string]any{
		"model": "gpt-5.4", "instructions": "Be brief.", "stream": true, "store": false,
		"include":           []any{"reasoning.encrypted_content"},
		"reasoning":         map[string]any{"effort": "high", "summary": "auto"},
		"max_output_tokens": 2000.0,
		"input": []any{
			map[string]any{"type": "message", "role": "user", "content": []any{
				map[string]any{"type": "input_image", "image_url": "data:image/png;base64,cG5n"},
				map[string]any{"type": "input_text", "text": "What does it show?"},
			}},
			map[string]any{"type": "message", "role": "assistant", "content": "Looking."},
			map[string]any{"type": "function_call", "call_id": "call_1", "name": "read_file", "arguments": `{"path":"a"}`},
			map[string]any{"type": "function_call_output", "call_id": "call_1", "output": "Error: no such file"},
		},
		"tools": []any{
			map[string]any{"type": "function", "name": "read_file", "description": "Read a file.", "parameters": map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}}, "strict": false},
			map[string]any{"type": "function", "name": "submit_output", "parameters": map[string]any{"type": "object", "properties": map[string]any{"content": map[string]any{"type": "string"}}, "required": []any{"content"}, "additionalProperties": false}, "strict": true},
		},
		"tool_choice": map[string]any{"type": "function", "name": "submit_output"},
		"text":        map[string]any{"format": map[string]any{"type": "json_schema", "name": "my_answer", "schema": map[string]any{"type": "object"}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("body (-want +got):\n%s", diff)
	}
	if s.requests[0].path != "/v1/responses" || s.requests[0].header.Get("Authorization") != "Bearer "+testKey {
		t.Errorf("sent to %s with %v", s.requests[0].path, s.requests[0].header)
	}

	// A model that does not reason is sent no reasoning and no include
	// (the API refuses both); json without a schema is json_object.
	s = newServer(t, reply{file: "responses_text.sse"})
	req = &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Text: "hi"}}, Reply: &llm.ReplyFormat{}}
	if _, _, err := streamOf(t, newResponses(s, "gpt-4.1"), req); err != nil {
		t.Fatal(err)
	}
	got = nil
	json.Unmarshal(s.requests[0].body, &got)
	if got["reasoning"] != nil || got["include"] != nil || cmp.Diff(map[string]any{"format": map[string]any{"type": "json_object"}}, got["text"]) != "" {
		t.Errorf("a model that does not reason: %s", s.requests[0].body)
	}
	// Nor is it sent effort off.
	s = newServer(t, reply{file: "responses_text.sse"})
	if _, _, err := streamOf(t, newResponses(s, "gpt-4.1"), &llm.Request{Effort: llm.EffortOff, Messages: simpleRequest.Messages}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(s.requests[0].body), `"reasoning"`) {
		t.Errorf("effort off to a model that does not reason: %s", s.requests[0].body)
	}
	// Effort off is "none", without a summary to ask for.
	s = newServer(t, reply{file: "responses_text.sse"})
	if _, _, err := streamOf(t, newResponses(s, "gpt-5.4"), &llm.Request{Effort: llm.EffortOff, Messages: simpleRequest.Messages}); err != nil {
		t.Fatal(err)
	}
	got = nil
	json.Unmarshal(s.requests[0].body, &got)
	if diff := cmp.Diff(map[string]any{"effort": "none"}, got["reasoning"]); diff != "" {
		t.Errorf("effort off (-want +got):\n%s", diff)
	}
}

// toolTurn is the engine's side of a tool loop: it asks, runs what the
// model called, and asks again, carrying each reply as the stage loop does
// (Text, ToolCalls, Replay), until the model stops calling tools.
func toolTurn(t *testing.T, m llm.Model, req *llm.Request, keepReplay bool) (*llm.Response, error) {
	t.Helper()
	for range 5 {
		resp, _, err := streamOf(t, m, req)
		if err != nil {
			return nil, err
		}
		if len(resp.ToolCalls) == 0 {
			return resp, nil
		}
		msg := llm.Message{Role: llm.RoleAssistant, Text: resp.Text, Thinking: resp.Thinking, ToolCalls: resp.ToolCalls, Replay: resp.Replay}
		if !keepReplay {
			msg.Replay = withoutReasoning(t, resp.Replay)
		}
		req.Messages = append(req.Messages, msg)
		for _, tc := range resp.ToolCalls {
			req.Messages = append(req.Messages, llm.Message{Role: llm.RoleTool, ToolCallID: tc.ID, ToolName: tc.Name, Text: "module example.com/x"})
		}
	}
	t.Fatal("the loop did not end")
	return nil, nil
}

// withoutReasoning is a Responses Replay with its reasoning items left
// out and the ids of the others kept: what a client that loses the
// encrypted items sends back.
func withoutReasoning(t *testing.T, raw json.RawMessage) json.RawMessage {
	var rp rReplay
	if err := json.Unmarshal(raw, &rp); err != nil {
		t.Fatal(err)
	}
	var kept []json.RawMessage
	for _, it := range rp.Items {
		if !bytes.Contains(it, []byte(`"type":"reasoning"`)) {
			kept = append(kept, it)
		}
	}
	rp.Items = kept
	out, _ := json.Marshal(rp)
	return out
}

var readTool = llm.ToolSpec{Name: "read_file", Description: "Read a file.", Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)}

// A tool loop against the fake Responses API, which holds each call to
// the stateless rules: the reasoning items of one call go back, encrypted,
// before the calls they came with. Without the Replay the fake refuses the
// second call as OpenAI does (the calls' ids name a reasoning item that is
// not there), so the rule is the fake's, not the test's.
func TestResponses_toolLoop(t *testing.T) {
	for _, keep := range []bool{true, false} {
		f := openaitest.NewServer()
		defer f.Close()
		f.Reply = func(n int, _ *openaitest.Request) openaitest.Turn {
			switch n {
			case 0:
				return openaitest.Turn{Reasoning: "Read go.mod first.", Text: "Reading.", Calls: []openaitest.Call{{Name: "read_file", Args: `{"path":"go.mod"}`}, {Name: "read_file", Args: `{"path":"go.sum"}`}}}
			case 1:
				return openaitest.Turn{Reasoning: "Now one more.", Calls: []openaitest.Call{{Name: "read_file", Args: `{"path":"README.md"}`}}}
			}
			return openaitest.Turn{Reasoning: "Done.", Text: "The module is example.com/x.", Usage: openaitest.Usage{Input: 900, Output: 20, Cached: 512, Reasoning: 12}}
		}
		m := NewResponses("gpt-5.4", Options{BaseURL: f.URL, Client: f.Client(), Retry: sse.Retry{Tries: 1}})
		req := &llm.Request{System: "Answer.", Messages: []llm.Message{{Role: llm.RoleUser, Text: "What module is this?"}}, Tools: []llm.ToolSpec{readTool}}
		resp, err := toolTurn(t, m, req, keep)
		if !keep {
			if err == nil || !strings.Contains(err.Error(), "without its required 'reasoning' item") || errors.Is(err, llm.ErrMechanismRefused) {
				t.Errorf("without the replay: %v; the fake should refuse the second call", err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if resp.Text != "The module is example.com/x." || resp.Thinking != "Done." || resp.Usage.CacheReadTokens != 512 || resp.Usage.ReasoningTokens != 12 {
			t.Errorf("the last reply: %+v", resp)
		}
		reqs := f.Requests()
		if len(reqs) != 3 {
			t.Fatalf("%d requests", len(reqs))
		}
		for _, r := range reqs {
			if r.Refused != "" {
				t.Errorf("refused: %s", r.Refused)
			}
		}
		// The third call carries both earlier reasoning items, each before
		// its calls.
		var types []string
		for _, it := range reqs[2].Body["input"].([]any) {
			types = append(types, it.(map[string]any)["type"].(string))
		}
		want := []string{"message", "reasoning", "message", "function_call", "function_call", "function_call_output", "function_call_output", "reasoning", "function_call", "function_call_output"}
		if diff := cmp.Diff(want, types); diff != "" {
			t.Errorf("the third call's input (-want +got):\n%s", diff)
		}
	}
}

// A stage's fallback model goes on from another's calls: their
// reasoning, which only the model that wrote it can read, is not sent to
// it (the fake refuses another model's, as OpenAI does), and their text
// and calls go without the ids that would want it.
func TestResponses_replayOfAnotherModel(t *testing.T) {
	f := openaitest.NewServer()
	defer f.Close()
	f.Reply = func(n int, _ *openaitest.Request) openaitest.Turn {
		if n == 0 {
			return openaitest.Turn{Reasoning: "Read go.mod first.", Text: "Reading.", Calls: []openaitest.Call{{Name: "read_file", Args: `{"path":"go.mod"}`}}}
		}
		return openaitest.Turn{Text: "The module is example.com/x."}
	}
	opts := Options{BaseURL: f.URL, Client: f.Client(), Retry: sse.Retry{Tries: 1}}
	req := &llm.Request{System: "Answer.", Messages: []llm.Message{{Role: llm.RoleUser, Text: "What module is this?"}}, Tools: []llm.ToolSpec{readTool}}
	resp, _, err := streamOf(t, NewResponses("gpt-5.5", opts), req)
	if err != nil {
		t.Fatal(err)
	}
	req.Messages = append(req.Messages, llm.Message{Role: llm.RoleAssistant, Text: resp.Text, ToolCalls: resp.ToolCalls, Replay: resp.Replay},
		llm.Message{Role: llm.RoleTool, ToolCallID: resp.ToolCalls[0].ID, ToolName: "read_file", Text: "module example.com/x"})
	if _, _, err := streamOf(t, NewResponses("gpt-5.4", opts), req); err != nil {
		t.Fatalf("the fallback model's call: %v", err)
	}
	if r := f.Requests()[1]; strings.Contains(string(r.Raw), `"type":"reasoning"`) {
		t.Errorf("gpt-5.5's reasoning was sent to gpt-5.4: %s", r.Raw)
	}
}

// A server that refuses a mechanism the request used says which, as a
// *llm.MechanismError the engine falls back from: a strict schema that
// does not fit strict mode, json_object without the word JSON.
func TestResponses_mechanismRefused(t *testing.T) {
	f := openaitest.NewServer()
	defer f.Close()
	m := NewResponses("gpt-5.4", Options{BaseURL: f.URL, Client: f.Client(), Retry: sse.Retry{Tries: 1}})
	loose := json.RawMessage(`{"type":"object","properties":{"content":{"type":"string"},"tags":{"type":"array"}},"required":["content"],"additionalProperties":false}`)
	for _, tt := range []struct {
		req  *llm.Request
		want string
	}{
		{&llm.Request{Messages: simpleRequest.Messages, Tools: []llm.ToolSpec{{Name: "submit_output", Schema: loose, Strict: true}}}, sse.MechanismStrict},
		{&llm.Request{Messages: simpleRequest.Messages, Reply: &llm.ReplyFormat{Schema: loose, Strict: true}}, sse.MechanismReply},
		{&llm.Request{Messages: simpleRequest.Messages, Reply: &llm.ReplyFormat{}}, sse.MechanismReply},
	} {
		_, _, err := streamOf(t, m, tt.req)
		var me *llm.MechanismError
		if !errors.As(err, &me) || me.Mechanism != tt.want {
			t.Errorf("err %v, want a %s refusal", err, tt.want)
		}
	}
	// The same schema sent not strict is taken.
	if _, _, err := streamOf(t, m, &llm.Request{Messages: simpleRequest.Messages, Tools: []llm.ToolSpec{{Name: "submit_output", Schema: loose}}}); err != nil {
		t.Errorf("not strict: %v", err)
	}
}

// Cancelling mid-stream ends the call at once with the context's error,
// and the server sees its client go.
func TestResponses_cancel(t *testing.T) {
	f := openaitest.NewServer()
	defer f.Close()
	f.Reply = func(int, *openaitest.Request) openaitest.Turn {
		return openaitest.Turn{Text: "This goes on and on", Hold: true}
	}
	m := NewResponses("gpt-5.4", Options{BaseURL: f.URL, Client: f.Client()})
	ctx, cancel := context.WithCancel(context.Background())
	var got []llm.Delta
	_, err := m.Stream(ctx, simpleRequest, func(d llm.Delta) error {
		got = append(got, d)
		cancel()
		return nil
	})
	if !errors.Is(err, context.Canceled) || len(got) != 1 {
		t.Errorf("err %v after %v", err, got)
	}
	f.Close() // waits for the handler, which counts the client gone
	if f.Cancelled() != 1 {
		t.Errorf("the server saw %d cancelled replies", f.Cancelled())
	}
}

// An API key in an error reply is masked wherever it falls, in each shape
// the Responses API sends an error in.
func TestResponses_keyInErrorAtEveryOffset(t *testing.T) {
	const key = "sk-proj-Zq8RrT2vLx9PmW4kN7bH3cJ5dF6gA1s"
	var mu sync.Mutex
	body := ""
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		b := body
		mu.Unlock()
		if strings.HasPrefix(b, "event:") || strings.HasPrefix(b, "data:") {
			w.Header().Set("Content-Type", "text/event-stream")
		} else {
			w.WriteHeader(http.StatusBadRequest)
		}
		io.WriteString(w, b)
	}))
	defer srv.Close()
	m := NewResponses("gpt-5.4", Options{BaseURL: srv.URL, APIKey: key, Client: srv.Client(), Retry: sse.Retry{Tries: 1}})
	for off := 0; off <= 600; off++ {
		pad := strings.Repeat("x", off)
		for _, b := range []string{
			`{"error":{"message":"` + pad + key + `","type":"invalid_request_error","param":"input","code":null}}`,
			`{"error":{"message":"bad","param":"` + pad + key + `"}}`,
			pad + key,
			"event: error\ndata: {\"type\":\"error\",\"code\":\"x\",\"message\":\"" + pad + key + "\"}\n\n",
			"event: response.failed\ndata: {\"type\":\"response.failed\",\"response\":{\"error\":{\"code\":\"bad\",\"message\":\"" + pad + key + "\"}}}\n\n",
		} {
			mu.Lock()
			body = b
			mu.Unlock()
			_, err := m.Stream(context.Background(), simpleRequest, func(llm.Delta) error { return nil })
			if err == nil {
				t.Fatalf("no error for %q", b)
			}
			if p := leakedPiece(err.Error(), key); p != "" {
				t.Fatalf("key at %d: %q of it is in the error %q", off, p, err)
			}
		}
	}
}

// The model list of an OpenAI-style server: ids in order, at most
// MaxListed, non-chat models and OpenRouter's tool-less ones marked, and a
// context length where the listing gives one.
func TestLister(t *testing.T) {
	f := openaitest.NewServer()
	defer f.Close()
	f.Key = testKey
	yes, no := true, false
	f.Models = []openaitest.Model{{ID: "gpt-5.4"}, {ID: "text-embedding-3-small"}, {ID: "anthropic/claude-x", ContextLength: 200000, Tools: &yes}, {ID: "some/no-tools", Tools: &no}}
	for i := range 300 {
		f.Models = append(f.Models, openaitest.Model{ID: "m" + string(rune('a'+i%26))})
	}
	got, err := NewLister(Options{BaseURL: f.URL, APIKey: testKey, Client: f.Client()}).List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 200 {
		t.Errorf("%d listed, want 200", len(got))
	}
	if got[0].ID != "gpt-5.4" || got[0].Embedding || got[0].NoTools != "" {
		t.Errorf("%+v", got[0])
	}
	if !got[1].Embedding || got[1].NoTools == "" {
		t.Errorf("an embedding model: %+v", got[1])
	}
	if got[2].ContextWindow != 200000 || got[2].NoTools != "" {
		t.Errorf("OpenRouter's entry: %+v", got[2])
	}
	if got[3].NoTools == "" {
		t.Errorf("listed without tools: %+v", got[3])
	}
	_, err = NewLister(Options{BaseURL: f.URL, APIKey: testKey + "x", Client: f.Client()}).List(context.Background())
	if err == nil || strings.Contains(err.Error(), testKey) {
		t.Errorf("a wrong key: %v", err)
	}
}

// logBuffer is a logger whose lines a test reads.
func logBuffer() (*slog.Logger, *bytes.Buffer) {
	var b bytes.Buffer
	return slog.New(slog.NewTextHandler(&b, nil)), &b
}

// A compatible Responses server without strict mode, which refuses the
// strict field whatever its value: a call that asks nothing strict (its
// tools say strict: false, as the API's default of strict requires) is
// made again at once without the field; one that asks for a strict tool
// is the engine's to fall back from (a strict MechanismError), and the
// call it makes again, without strict, goes without the field. From then
// on the field is left out, with one warning.
func TestResponses_noStrictField(t *testing.T) {
	f := openaitest.NewServer()
	defer f.Close()
	f.NoStrict = true
	log, logs := logBuffer()
	m := NewResponses("gpt-5.4", Options{BaseURL: f.URL, Client: f.Client(), Retry: sse.Retry{Tries: 1}, Log: log})
	loose := json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)
	closed := json.RawMessage(`{"type":"object","properties":{"content":{"type":"string"}},"required":["content"],"additionalProperties":false}`)
	working := &llm.Request{Messages: simpleRequest.Messages, Tools: []llm.ToolSpec{{Name: "read_file", Schema: loose}}}
	if _, _, err := streamOf(t, m, working); err != nil {
		t.Fatalf("a call without strict tools: %v", err)
	}
	reqs := f.Requests()
	if len(reqs) != 2 || reqs[0].Refused == "" || reqs[1].Refused != "" || strings.Contains(string(reqs[1].Raw), `"strict"`) {
		t.Fatalf("want refused, then again without the field: %d requests, %q", len(reqs), reqs[0].Refused)
	}

	// A fresh model asks for a strict tool first: the engine's fall-back.
	f2 := openaitest.NewServer()
	defer f2.Close()
	f2.NoStrict = true
	m = NewResponses("gpt-5.4", Options{BaseURL: f2.URL, Client: f2.Client(), Retry: sse.Retry{Tries: 1}, Log: log})
	answer := &llm.Request{Messages: simpleRequest.Messages, Tools: []llm.ToolSpec{{Name: "read_file", Schema: loose}, {Name: "submit_output", Schema: closed, Strict: true}}}
	_, _, err := streamOf(t, m, answer)
	var me *llm.MechanismError
	if !errors.As(err, &me) || me.Mechanism != sse.MechanismStrict {
		t.Fatalf("err %v, want a strict refusal for the engine", err)
	}
	answer.Tools[1].Strict = false // as the engine asks again
	if _, _, err := streamOf(t, m, answer); err != nil {
		t.Fatalf("asked again without strict: %v", err)
	}
	if _, _, err := streamOf(t, m, working); err != nil {
		t.Fatal(err)
	}
	reqs = f2.Requests()
	if len(reqs) != 3 || reqs[1].Refused != "" || reqs[2].Refused != "" {
		t.Fatalf("%d requests, want refused, taken, taken", len(reqs))
	}
	for _, r := range reqs[1:] {
		if strings.Contains(string(r.Raw), `"strict"`) {
			t.Errorf("the field was sent again: %s", r.Raw)
		}
	}
	if n := strings.Count(logs.String(), "takes no strict field"); n != 2 {
		t.Errorf("warned %d times, want once a model:\n%s", n, logs)
	}
}

// A model known not to reason is sent no reasoning at all on the
// Responses API either, whatever level it is asked: the fake refuses the
// parameter for it, as OpenAI does.
func TestResponses_noEffortForAModelThatDoesNotReason(t *testing.T) {
	f := openaitest.NewServer()
	defer f.Close()
	for _, effort := range []string{llm.EffortOff, llm.EffortHigh} {
		m := NewResponses("gpt-4.1", Options{BaseURL: f.URL, Client: f.Client(), Retry: sse.Retry{Tries: 1}})
		if _, _, err := streamOf(t, m, &llm.Request{Messages: simpleRequest.Messages, Effort: effort}); err != nil {
			t.Errorf("at %s: %v", effort, err)
		}
	}
	for _, r := range f.Requests() {
		if strings.Contains(string(r.Raw), `"reasoning"`) {
			t.Errorf("reasoning sent: %s", r.Raw)
		}
	}
}
