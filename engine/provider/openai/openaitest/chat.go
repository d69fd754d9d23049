package openaitest

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// chat serves POST /chat/completions.
func (s *Server) chat(w http.ResponseWriter, r *http.Request, req *Request) {
	b := req.Body
	model := str(b["model"])
	tools, _ := b["tools"].([]any)
	msgs, _ := b["messages"].([]any)

	if msg, param := s.serverFields(b, len(tools) > 0); msg != "" {
		s.refuse(w, req, 400, msg, param)
		return
	}
	// A model that does not reason takes no reasoning_effort, not even
	// "none".
	if _, has := b["reasoning_effort"]; has && doesNotReason(model) {
		s.refuse(w, req, 400, "Unsupported parameter: 'reasoning_effort' is not supported with this model.", "reasoning_effort")
		return
	}
	if p := samplingRefused(model, str(b["reasoning_effort"]), b); p != "" {
		s.refuse(w, req, 400, fmt.Sprintf("Unsupported parameter: '%s' is not supported with this model.", p), p)
		return
	}
	// GPT-5.4 and later: function tools only with reasoning_effort "none";
	// a request that names none gets the model's default, which is not.
	if len(tools) > 0 && noToolsWithEffort(model) {
		effort := str(b["reasoning_effort"])
		if effort == "" {
			effort = "medium"
		}
		if effort != "none" {
			s.refuse(w, req, 400, fmt.Sprintf("Function tools with reasoning_effort are not supported for %s in /v1/chat/completions. To use function tools, use /v1/responses or set reasoning_effort to 'none'.", model), "reasoning_effort")
			return
		}
	}
	var names []string
	for i, t := range tools {
		f, _ := t.(map[string]any)["function"].(map[string]any)
		names = append(names, str(f["name"]))
		if f["strict"] == true {
			if msg := StrictProblem(f["parameters"]); msg != "" {
				s.refuse(w, req, 400, fmt.Sprintf("Invalid schema for function '%s': %s", f["name"], msg), fmt.Sprintf("tools[%d].function.parameters", i))
				return
			}
		}
	}
	if tc, ok := b["tool_choice"].(map[string]any); ok {
		name := str(tc["function"].(map[string]any)["name"])
		if !slices.Contains(names, name) {
			s.refuse(w, req, 400, fmt.Sprintf("Invalid value for 'tool_choice': function '%s' is not among the tools.", name), "tool_choice")
			return
		}
	}
	if rf, ok := b["response_format"].(map[string]any); ok {
		switch rf["type"] {
		case "json_object":
			if !mentionsJSON(msgs) {
				s.refuse(w, req, 400, "'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'.", "messages")
				return
			}
		case "json_schema":
			js, _ := rf["json_schema"].(map[string]any)
			if js["strict"] == true {
				if msg := StrictProblem(js["schema"]); msg != "" {
					s.refuse(w, req, 400, fmt.Sprintf("Invalid schema for response_format '%s': %s", js["name"], msg), "response_format")
					return
				}
			}
		}
	}
	// Tool calls and their answers.
	pending := map[string]bool{}
	for i, m := range msgs {
		m, _ := m.(map[string]any)
		switch m["role"] {
		case "assistant":
			if len(pending) > 0 {
				s.refuse(w, req, 400, "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: "+keys(pending), fmt.Sprintf("messages.[%d].role", i))
				return
			}
			calls, _ := m["tool_calls"].([]any)
			for _, c := range calls {
				c, _ := c.(map[string]any)
				id := str(c["id"])
				pending[id] = true
				if s.Gemini {
					s.mu.Lock()
					want := s.sigs[id]
					s.mu.Unlock()
					got := ""
					if ec, ok := c["extra_content"].(map[string]any); ok {
						if g, ok := ec["google"].(map[string]any); ok {
							got = str(g["thought_signature"])
						}
					}
					if want != "" && got != want {
						s.refuse(w, req, 400, "Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:"+str(c["function"].(map[string]any)["name"])+"` , position 2. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.", "")
						return
					}
				}
			}
		case "tool":
			id := str(m["tool_call_id"])
			if !pending[id] {
				s.refuse(w, req, 400, "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.", fmt.Sprintf("messages.[%d].role", i))
				return
			}
			delete(pending, id)
		default:
			if len(pending) > 0 {
				s.refuse(w, req, 400, "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: "+keys(pending), fmt.Sprintf("messages.[%d].role", i))
				return
			}
		}
	}

	t := s.turn(req)
	t.Usage = s.credit(req, t.Usage)
	if t.Status != 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(t.Status)
		w.Write([]byte(t.Body))
		return
	}
	n := len(s.Requests())
	id := fmt.Sprintf("chatcmpl-fake%d", n)
	e := newSSE(w, r, s)
	chunk := func(delta map[string]any, finish any) {
		e.data(map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": 1764495600, "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
		})
	}
	chunk(map[string]any{"role": "assistant", "content": ""}, nil)
	first := true
	piece := func(delta map[string]any) bool {
		chunk(delta, nil)
		if first && t.Hold {
			e.hold()
			return false
		}
		first = false
		return true
	}
	for _, p := range words(t.Reasoning) {
		if !piece(map[string]any{"reasoning_content": p}) {
			return
		}
	}
	for _, p := range words(t.Text) {
		if !piece(map[string]any{"content": p}) {
			return
		}
	}
	for _, p := range words(t.Refusal) {
		if !piece(map[string]any{"refusal": p}) {
			return
		}
	}
	for i, c := range t.Calls {
		callID := fmt.Sprintf("call_%d_%d", n, i)
		for j, frag := range halves(c.Args) {
			tc := map[string]any{"index": i, "function": map[string]any{"arguments": frag}}
			if j == 0 {
				tc["id"], tc["type"] = callID, "function"
				tc["function"].(map[string]any)["name"] = c.Name
				if s.Gemini {
					sig := signature(callID)
					s.mu.Lock()
					s.sigs[callID] = sig
					s.mu.Unlock()
					tc["extra_content"] = map[string]any{"google": map[string]any{"thought_signature": sig}}
				}
			}
			if !piece(map[string]any{"tool_calls": []any{tc}}) {
				return
			}
		}
	}
	finish := "stop"
	switch {
	case t.Length:
		finish = "length"
	case len(t.Calls) > 0:
		finish = "tool_calls"
	}
	chunk(map[string]any{}, finish)
	e.data(map[string]any{
		"id": id, "object": "chat.completion.chunk", "created": 1764495600, "model": model, "choices": []any{},
		"usage": map[string]any{
			"prompt_tokens": t.Usage.Input, "completion_tokens": t.Usage.Output, "total_tokens": t.Usage.Input + t.Usage.Output,
			"prompt_tokens_details":     map[string]any{"cached_tokens": t.Usage.Cached},
			"completion_tokens_details": map[string]any{"reasoning_tokens": t.Usage.Reasoning},
		},
	})
	fmt.Fprint(w, "data: [DONE]\n\n")
}

func keys(m map[string]bool) string {
	var k []string
	for id := range m {
		k = append(k, id)
	}
	slices.Sort(k)
	return strings.Join(k, ", ")
}

// serverFields holds a body's server-specific constrained-reply fields to
// the rules of the server the fake is (see the package's doc): the 400's
// message and param, or "".
func (s *Server) serverFields(b map[string]any, tools bool) (msg, param string) {
	so, hasSO := b["structured_outputs"]
	schema, hasSchema := b["json_schema"]
	_, hasGrammar := b["grammar"]
	switch s.Server {
	case "vllm":
		if !hasSO {
			return "", ""
		}
		m, _ := so.(map[string]any)
		kinds := 0
		for _, k := range []string{"json", "regex", "choice", "grammar", "json_object", "structural_tag"} {
			if m[k] != nil {
				kinds++
			}
		}
		switch {
		case kinds > 1:
			return fmt.Sprintf("You can only use one kind of structured outputs constraint but multiple are specified: %v", m), "structured_outputs"
		case kinds == 0:
			return fmt.Sprintf("You must use one kind of structured outputs constraint but none are specified: %v", m), "structured_outputs"
		case s.NoResponseFormat:
			return "The provided JSON schema contains features not supported by xgrammar.", ""
		}
	case "llama.cpp":
		switch {
		case hasSchema && hasGrammar:
			return "Cannot use both json_schema and grammar", ""
		case hasGrammar && tools:
			return "Cannot specify grammar with tools", ""
		case hasSchema && s.NoResponseFormat:
			return fmt.Sprintf("JSON schema conversion failed:\nUnrecognized schema: %v", schema), ""
		}
	default:
		for _, k := range []string{"structured_outputs", "json_schema", "grammar"} {
			if _, has := b[k]; has {
				return "Unrecognized request argument supplied: " + k, ""
			}
		}
	}
	return "", ""
}
