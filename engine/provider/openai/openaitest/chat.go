package openaitest

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/coda-acp/coda/engine/provider/internal/fakekit"
)

// chat streams t as chat completions stream a reply.
func (s *Server) chat(w http.ResponseWriter, r *http.Request, req *Request, t Turn) {
	model := str(req.Body["model"])
	n := s.Log.Len()
	id := fmt.Sprintf("chatcmpl-fake%d", n)
	e := fakekit.SSE(w, "text/event-stream", "\n\n")
	chunk := func(delta map[string]any, finish any) {
		e.Data(map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": 1764495600, "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
		})
	}
	chunk(map[string]any{"role": "assistant", "content": ""}, nil)
	first := true
	piece := func(delta map[string]any) bool {
		chunk(delta, nil)
		if first && t.Hold {
			s.Log.Hold(r.Context())
			return false
		}
		first = false
		return true
	}
	for _, d := range s.chatDeltas(n, t) {
		if !piece(d) {
			return
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
	e.Data(map[string]any{
		"id": id, "object": "chat.completion.chunk", "created": 1764495600, "model": model, "choices": []any{},
		"usage": chatUsage(t.Usage),
	})
	e.Raw("data: [DONE]\n\n")
}

// chatDeltas are the deltas of t's reply, in order: reasoning, text,
// refusal a word at a time, then each call's arguments in two fragments.
func (s *Server) chatDeltas(n int, t Turn) []map[string]any {
	var out []map[string]any
	for _, f := range []struct{ key, text string }{{"reasoning_content", t.Reasoning}, {"content", t.Text}, {"refusal", t.Refusal}} {
		for _, p := range fakekit.Words(f.text) {
			out = append(out, map[string]any{f.key: p})
		}
	}
	for i, c := range t.Calls {
		callID := fmt.Sprintf("call_%d_%d", n, i)
		for j, frag := range fakekit.Halves(c.Args) {
			tc := map[string]any{"index": i, "function": map[string]any{"arguments": frag}}
			if j == 0 {
				tc["id"], tc["type"] = callID, "function"
				tc["function"].(map[string]any)["name"] = c.Name
				if s.Gemini {
					tc["extra_content"] = map[string]any{"google": map[string]any{"thought_signature": s.signCall(callID)}}
				}
			}
			out = append(out, map[string]any{"tool_calls": []any{tc}})
		}
	}
	return out
}

// signCall gives a chat tool call its signature, as Gemini's endpoint
// does.
func (s *Server) signCall(callID string) string {
	sig := signature(callID)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sigs[callID] = sig
	return sig
}

func keys(m map[string]bool) string {
	var k []string
	for id := range m {
		k = append(k, id)
	}
	slices.Sort(k)
	return strings.Join(k, ", ")
}

// serverRules hold a chat body's server-specific constrained-reply fields
// to the rules of the server the fake is (see the package's doc).
var serverRules = []fakekit.Rule[*call]{
	{Name: "vllm-one-constraint", Source: "https://docs.vllm.ai/en/latest/features/structured_outputs/", Check: func(c *call) error {
		so, has := c.b["structured_outputs"]
		if c.s.Server != "vllm" || !has {
			return nil
		}
		m, _ := so.(map[string]any)
		switch kinds := constraints(m); {
		case kinds > 1:
			return fakekit.RefuseParam("structured_outputs", "You can only use one kind of structured outputs constraint but multiple are specified: %v", m)
		case kinds == 0:
			return fakekit.RefuseParam("structured_outputs", "You must use one kind of structured outputs constraint but none are specified: %v", m)
		case c.s.NoResponseFormat:
			return fakekit.Refuse("The provided JSON schema contains features not supported by xgrammar.")
		}
		return nil
	}},
	{Name: "llamacpp-grammar", Source: "https://github.com/ggml-org/llama.cpp/tree/master/tools/server", Check: func(c *call) error {
		if c.s.Server != "llama.cpp" {
			return nil
		}
		schema, hasSchema := c.b["json_schema"]
		_, hasGrammar := c.b["grammar"]
		switch {
		case hasSchema && hasGrammar:
			return fakekit.Refuse("Cannot use both json_schema and grammar")
		case hasGrammar && len(c.tools) > 0:
			return fakekit.Refuse("Cannot specify grammar with tools")
		case hasSchema && c.s.NoResponseFormat:
			return fakekit.Refuse("JSON schema conversion failed:\nUnrecognized schema: %v", schema)
		}
		return nil
	}},
	{Name: "server-fields-known", Source: docChat, Check: func(c *call) error {
		if c.s.Server == "vllm" || c.s.Server == "llama.cpp" {
			return nil
		}
		for _, k := range []string{"structured_outputs", "json_schema", "grammar"} {
			if _, has := c.b[k]; has {
				return fakekit.Refuse("Unrecognized request argument supplied: %s", k)
			}
		}
		return nil
	}},
}

// constraints counts the kinds of constraint a vLLM structured_outputs
// holds.
func constraints(m map[string]any) int {
	kinds := 0
	for _, k := range []string{"json", "regex", "choice", "grammar", "json_object", "structural_tag"} {
		if m[k] != nil {
			kinds++
		}
	}
	return kinds
}
