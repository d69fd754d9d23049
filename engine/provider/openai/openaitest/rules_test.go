package openaitest

import (
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine/provider/internal/fakekit"
)

type testCase struct {
	body  string
	setup func(*Server)
}

// send posts c's body to path on a fresh fake, and answers the rule that
// refused it.
func send(path string) func(t *testing.T, c testCase) string {
	return func(t *testing.T, c testCase) string {
		s := NewServer()
		defer s.Close()
		if c.setup != nil {
			c.setup(s)
		}
		resp, err := s.Client().Post(s.URL+path, "application/json", strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		reqs := s.Requests()
		if len(reqs) != 1 || reqs[0].Refused == "" || resp.StatusCode < 400 {
			t.Fatalf("status %d, %d requests: not refused", resp.StatusCode, len(reqs))
		}
		return reqs[0].Rule
	}
}

// Every rule of chat completions refuses a request that breaks it, under
// its own name.
func TestChatRules(t *testing.T) {
	body := func(model string, extra ...string) string {
		return `{"model":"` + model + `","messages":[{"role":"user","content":"hi"}]` + strings.Join(append([]string{""}, extra...), ",") + `}`
	}
	msgs := func(model, m string, extra ...string) string {
		return `{"model":"` + model + `","messages":[` + m + `]` + strings.Join(append([]string{""}, extra...), ",") + `}`
	}
	const (
		f      = `"tools":[{"type":"function","function":{"name":"f","parameters":{}}}]`
		open   = `{"type":"object","properties":{"a":{"type":"string"}}}`
		user   = `{"role":"user","content":"hi"}`
		called = `{"role":"assistant","tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]}`
	)
	cases := map[string]testCase{
		"prompt-cache-key": {body: body("gpt-5", `"prompt_cache_key":"`+strings.Repeat("k", 65)+`"`)},
		"strict-known": {body: body("gpt-5", `"tools":[{"type":"function","function":{"name":"f","parameters":{},"strict":false}}]`),
			setup: func(s *Server) { s.NoStrict = true }},
		"tool-choice-known": {body: body("gpt-5", f, `"tool_choice":{"type":"function","function":{"name":"f"}}`),
			setup: func(s *Server) { s.NoToolChoice = true }},
		"response-format-known": {body: body("gpt-5", `"response_format":{"type":"json_object"}`),
			setup: func(s *Server) { s.NoResponseFormat = true }},
		"vllm-one-constraint":    {body: body("qwen", `"structured_outputs":{}`), setup: func(s *Server) { s.Server = "vllm" }},
		"llamacpp-grammar":       {body: body("qwen", `"json_schema":{},"grammar":"root ::= x"`), setup: func(s *Server) { s.Server = "llama.cpp" }},
		"server-fields-known":    {body: body("gpt-5", `"grammar":"root ::= x"`)},
		"effort-reasoning-model": {body: body("gpt-4o", `"reasoning_effort":"low"`)},
		"sampling-reasoning":     {body: body("gpt-5", `"temperature":0.5`)},
		"tools-effort-none":      {body: body("gpt-5.4", f)},
		"strict-function":        {body: body("gpt-5", `"tools":[{"type":"function","function":{"name":"f","strict":true,"parameters":`+open+`}}]`)},
		"tool-choice-offered":    {body: body("gpt-5", f, `"tool_choice":{"type":"function","function":{"name":"g"}}`)},
		"json-object-says-json":  {body: body("gpt-5", `"response_format":{"type":"json_object"}`)},
		"strict-response-format": {body: body("gpt-5", `"response_format":{"type":"json_schema","json_schema":{"name":"a","strict":true,"schema":`+open+`}}`)},
		"tool-messages-answer":   {body: msgs("gpt-5", user+`,{"role":"tool","tool_call_id":"x","content":"r"}`)},
		"gemini-thought-signatures": {body: msgs("gemini-3", user+","+called+`,{"role":"tool","tool_call_id":"call_1","content":"r"}`, f),
			setup: func(s *Server) { s.Gemini = true; s.signCall("call_1") }},
	}
	fakekit.TestRules(t, chatRules, cases, send("/chat/completions"))
}

// Every rule of the Responses API refuses a request that breaks it, under
// its own name.
func TestResponsesRules(t *testing.T) {
	body := func(model, input string, extra ...string) string {
		if input == "" {
			input = user
		}
		return `{"model":"` + model + `","store":false,"input":[` + input + `]` + strings.Join(append([]string{""}, extra...), ",") + `}`
	}
	const (
		f    = `"tools":[{"type":"function","name":"f","parameters":{},"strict":false}]`
		open = `{"type":"object","properties":{"a":{"type":"string"}}}`
		call = `{"type":"function_call","id":"fc_1","call_id":"c1","name":"f","arguments":"{}"}`
	)
	issue := func(model, next string) func(*Server) {
		return func(s *Server) { s.issued["enc"] = issued{id: "rs_1", next: next, model: model} }
	}
	reasoning := `{"type":"reasoning","id":"rs_1","encrypted_content":"enc","summary":[]},{"id":"msg_1","role":"assistant","content":"x"}`
	cases := map[string]testCase{
		"prompt-cache-key":         {body: body("gpt-5", "", `"prompt_cache_key":"`+strings.Repeat("k", 65)+`"`)},
		"strict-known":             {body: body("gpt-5", "", f), setup: func(s *Server) { s.NoStrict = true }},
		"tool-choice-known":        {body: body("gpt-5", "", f, `"tool_choice":{"type":"function","name":"f"}`), setup: func(s *Server) { s.NoToolChoice = true }},
		"response-format-known":    {body: body("gpt-5", "", `"text":{"format":{"type":"json_object"}}`), setup: func(s *Server) { s.NoResponseFormat = true }},
		"stateless":                {body: `{"model":"gpt-5","input":[` + user + `]}`},
		"reasoning-model":          {body: body("gpt-4o", "", `"reasoning":{"effort":"low"}`)},
		"sampling-reasoning":       {body: body("gpt-5", "", `"temperature":0.5`)},
		"strict-function":          {body: body("gpt-5", "", `"tools":[{"type":"function","name":"f","parameters":`+open+`}]`)},
		"tool-choice-offered":      {body: body("gpt-5", "", f, `"tool_choice":{"type":"function","name":"g"}`)},
		"json-object-says-json":    {body: body("gpt-5", "", `"text":{"format":{"type":"json_object"}}`)},
		"strict-text-format":       {body: body("gpt-5", "", `"text":{"format":{"type":"json_schema","name":"a","strict":true,"schema":`+open+`}}`)},
		"reasoning-item-issued":    {body: body("gpt-5", user+","+reasoning)},
		"reasoning-item-model":     {body: body("gpt-5", user+","+reasoning), setup: issue("gpt-5-mini", "msg_1")},
		"reasoning-item-following": {body: body("gpt-5", user+","+reasoning), setup: issue("gpt-5", "msg_2")},
		"item-with-reasoning": {body: body("gpt-5", user+","+call+`,{"type":"function_call_output","call_id":"c1","output":"x"}`, f),
			setup: func(s *Server) { s.following["fc_1"] = "rs_1" }},
		"output-answers-call": {body: body("gpt-5", user+`,{"type":"function_call_output","call_id":"c9","output":"x"}`)},
		"calls-answered":      {body: body("gpt-5", user+","+call, f)},
		"input-image":         {body: body("gpt-5", `{"role":"user","content":[{"type":"input_image","file_id":"file-nope"}]}`)},
	}
	fakekit.TestRules(t, responsesRules, cases, send("/responses"))
}

const user = `{"role":"user","content":"hi"}`
