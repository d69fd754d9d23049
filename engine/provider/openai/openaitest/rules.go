package openaitest

import (
	"fmt"
	"slices"

	"github.com/coda-acp/coda/engine/provider/internal/fakekit"
)

// A call is one request to chat completions or Responses as the rules
// read it.
type call struct {
	s     *Server
	b     map[string]any
	model string
	tools []any
	msgs  []any // chat's messages
	input []any // Responses' input
}

func (s *Server) call(req *Request) *call {
	c := &call{s: s, b: req.Body, model: str(req.Body["model"])}
	c.tools, _ = c.b["tools"].([]any)
	c.msgs, _ = c.b["messages"].([]any)
	c.input, _ = c.b["input"].([]any)
	return c
}

// chatEffort is chat's reasoning_effort; responsesEffort, Responses'
// reasoning.effort, the model's default (medium) when a reasoning model
// is given none.
func (c *call) chatEffort() string { return str(c.b["reasoning_effort"]) }

func (c *call) responsesEffort() string {
	rp, _ := c.b["reasoning"].(map[string]any)
	if e := str(rp["effort"]); e != "" || !reasons(c.model) {
		return e
	}
	return "medium"
}

// function is the i-th tool's function: chat's tools[i].function, the
// Responses tool itself.
func (c *call) function(i int) map[string]any {
	t, _ := c.tools[i].(map[string]any)
	if fn, ok := t["function"].(map[string]any); ok {
		return fn
	}
	return t
}

// named is the function a named tool_choice names, and whether there is
// one: chat's {"function": {"name"}}, Responses' {"name"}.
func (c *call) named() (string, bool) {
	tc, ok := c.b["tool_choice"].(map[string]any)
	if !ok {
		return "", false
	}
	if fn, ok := tc["function"].(map[string]any); ok {
		return str(fn["name"]), true
	}
	return str(tc["name"]), true
}

// offered reports whether a function of that name is among the tools.
func (c *call) offered(name string) bool {
	for i := range c.tools {
		if str(c.function(i)["name"]) == name {
			return true
		}
	}
	return false
}

// The documents the rules cite.
const (
	docChat       = "https://platform.openai.com/docs/api-reference/chat"
	docResponses  = "https://platform.openai.com/docs/api-reference/responses"
	docReasoning  = "https://developers.openai.com/api/docs/guides/reasoning"
	docKeeping    = docReasoning + "#keeping-reasoning-items-in-context"
	docStructured = "https://platform.openai.com/docs/guides/structured-outputs#supported-schemas"
	docJSONMode   = "https://platform.openai.com/docs/guides/structured-outputs#json-mode"
	docFunctions  = "https://platform.openai.com/docs/guides/function-calling"
)

// lacking are the rules of a compatible server without one of the
// answer's mechanisms (NoStrict, NoToolChoice, NoResponseFormat), on both
// endpoints.
var lacking = []fakekit.Rule[*call]{
	{Name: "strict-known", Source: "https://ai.google.dev/gemini-api/docs/openai", Check: func(c *call) error {
		for i := range c.tools {
			if _, has := c.function(i)["strict"]; has && c.s.NoStrict { // the field itself, whatever its value
				return fakekit.Refuse("Invalid JSON payload received. Unknown name \"strict\" at 'tools[%d].function': Cannot find field.", i)
			}
		}
		return nil
	}},
	{Name: "tool-choice-known", Source: docFunctions + "#tool-choice", Check: func(c *call) error {
		_, named := c.b["tool_choice"].(map[string]any)
		return fakekit.IfParam(named && c.s.NoToolChoice, "tool_choice", "Invalid tool_choice: this server takes only \"auto\" and \"none\".")
	}},
	{Name: "response-format-known", Source: "https://console.groq.com/docs/structured-outputs", Check: func(c *call) error {
		text, _ := c.b["text"].(map[string]any)
		if c.s.NoResponseFormat && (c.b["response_format"] != nil || text["format"] != nil) {
			return fakekit.RefuseParam("response_format", "response_format json_schema is not supported with this model")
		}
		return nil
	}},
}

// chatRules are what chat completions holds a request to, in order.
var chatRules = slices.Concat(lacking, cacheKeyRules, serverRules, []fakekit.Rule[*call]{
	{Name: "effort-reasoning-model", Source: docChat + "#chat-create-reasoning_effort", Check: func(c *call) error {
		_, has := c.b["reasoning_effort"]
		return fakekit.IfParam(has && doesNotReason(c.model), "reasoning_effort", "Unsupported parameter: 'reasoning_effort' is not supported with this model.")
	}},
	{Name: "sampling-reasoning", Source: docReasoning, Check: func(c *call) error {
		return sampling(c, c.chatEffort())
	}},
	{Name: "tools-effort-none", Source: "https://github.com/openai/openai-openapi/issues/541", Check: func(c *call) error {
		effort := c.chatEffort()
		if effort == "" {
			effort = "medium" // the model's default
		}
		if len(c.tools) > 0 && noToolsWithEffort(c.model) && effort != "none" {
			return fakekit.RefuseParam("reasoning_effort", "Function tools with reasoning_effort are not supported for %s in /v1/chat/completions. To use function tools, use /v1/responses or set reasoning_effort to 'none'.", c.model)
		}
		return nil
	}},
	{Name: "strict-function", Source: docStructured, Check: func(c *call) error {
		return strictFunctions(c, "tools[%d].function.parameters", func(fn map[string]any) bool { return fn["strict"] == true })
	}},
	{Name: "tool-choice-offered", Source: docFunctions + "#tool-choice", Check: func(c *call) error {
		name, ok := c.named()
		return fakekit.IfParam(ok && !c.offered(name), "tool_choice", "Invalid value for 'tool_choice': function '%s' is not among the tools.", name)
	}},
	{Name: "json-object-says-json", Source: docJSONMode, Check: func(c *call) error {
		rf, _ := c.b["response_format"].(map[string]any)
		return fakekit.IfParam(rf["type"] == "json_object" && !mentionsJSON(c.msgs), "messages", "'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'.")
	}},
	{Name: "strict-response-format", Source: docStructured, Check: func(c *call) error {
		rf, _ := c.b["response_format"].(map[string]any)
		js, _ := rf["json_schema"].(map[string]any)
		if rf["type"] == "json_schema" && js["strict"] == true {
			if msg := StrictProblem(js["schema"]); msg != "" {
				return fakekit.RefuseParam("response_format", "Invalid schema for response_format '%s': %s", js["name"], msg)
			}
		}
		return nil
	}},
	{Name: "tool-messages-answer", Source: docFunctions, Check: toolMessages},
	{Name: "gemini-thought-signatures", Source: "https://ai.google.dev/gemini-api/docs/thought-signatures", Check: geminiSignatures},
})

// responsesRules are what the Responses API holds a request to, in order.
var responsesRules = slices.Concat(lacking, cacheKeyRules, []fakekit.Rule[*call]{
	{Name: "stateless", Source: docKeeping, Check: func(c *call) error {
		return fakekit.IfParam(c.b["store"] != false, "store", "This fake serves stateless calls only: send store: false.")
	}},
	{Name: "reasoning-model", Source: docReasoning, Check: func(c *call) error {
		_, ok := c.b["reasoning"].(map[string]any)
		return fakekit.IfParam(ok && !reasons(c.model), "reasoning.effort", "Unsupported parameter: 'reasoning.effort' is not supported with this model.")
	}},
	{Name: "sampling-reasoning", Source: docReasoning, Check: func(c *call) error {
		return sampling(c, c.responsesEffort())
	}},
	{Name: "strict-function", Source: docResponses + "/create#responses-create-tools", Check: func(c *call) error {
		// strict unless it says not ("Default true")
		return strictFunctions(c, "tools[%d].parameters", func(fn map[string]any) bool { return fn["strict"] != false && !c.s.NoStrict })
	}},
	{Name: "tool-choice-offered", Source: docFunctions + "#tool-choice", Check: func(c *call) error {
		name, ok := c.named()
		return fakekit.IfParam(ok && !c.offered(name), "tool_choice", "Tool choice '%s' not found in 'tools' parameter.", name)
	}},
	{Name: "json-object-says-json", Source: docJSONMode, Check: func(c *call) error {
		if f := c.textFormat(); f["type"] == "json_object" && !mentionsJSON([]any{c.input, c.b["instructions"]}) {
			return fakekit.RefuseParam("text.format", "Response input messages must contain the word 'json' in some form to use 'text.format' of type 'json_object'.")
		}
		return nil
	}},
	{Name: "strict-text-format", Source: docStructured, Check: func(c *call) error {
		if f := c.textFormat(); f["type"] == "json_schema" && f["strict"] == true {
			if msg := StrictProblem(f["schema"]); msg != "" {
				return fakekit.RefuseParam("text.format.schema", "Invalid schema for response_format '%s': %s", f["name"], msg)
			}
		}
		return nil
	}},
}, inputRules)

// textFormat is Responses' text.format, or nil.
func (c *call) textFormat() map[string]any {
	text, _ := c.b["text"].(map[string]any)
	f, _ := text["format"].(map[string]any)
	return f
}

// sampling: a reasoning model takes temperature and top_p only with
// reasoning effort none.
func sampling(c *call, effort string) error {
	if p := samplingRefused(c.model, effort, c.b); p != "" {
		return fakekit.RefuseParam(p, "Unsupported parameter: '%s' is not supported with this model.", p)
	}
	return nil
}

// strictFunctions holds each strict function's parameters to strict
// mode; param is where the refusal points, with the tool's index.
func strictFunctions(c *call, param string, strict func(fn map[string]any) bool) error {
	for i := range c.tools {
		fn := c.function(i)
		if !strict(fn) {
			continue
		}
		if msg := StrictProblem(fn["parameters"]); msg != "" {
			return fakekit.RefuseParam(fmt.Sprintf(param, i), "Invalid schema for function '%s': %s", fn["name"], msg)
		}
	}
	return nil
}

// toolMessages: a tool message answers a tool call of the assistant
// message before it, and every call is answered before anything else.
func toolMessages(c *call) error {
	pending := map[string]bool{}
	for i, m := range c.msgs {
		m, _ := m.(map[string]any)
		if m["role"] == "tool" {
			id := str(m["tool_call_id"])
			if !pending[id] {
				return fakekit.RefuseParam(fmt.Sprintf("messages.[%d].role", i), "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.")
			}
			delete(pending, id)
			continue
		}
		if len(pending) > 0 {
			return fakekit.RefuseParam(fmt.Sprintf("messages.[%d].role", i), "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: %s", keys(pending))
		}
		calls, _ := m["tool_calls"].([]any)
		for _, tc := range calls {
			tc, _ := tc.(map[string]any)
			pending[str(tc["id"])] = true
		}
	}
	return nil
}

// geminiSignatures: as Gemini's OpenAI endpoint, a tool call goes back
// with the thought signature it came with.
func geminiSignatures(c *call) error {
	if !c.s.Gemini {
		return nil
	}
	for _, m := range c.msgs {
		m, _ := m.(map[string]any)
		calls, _ := m["tool_calls"].([]any)
		for _, tc := range calls {
			tc, _ := tc.(map[string]any)
			ec, _ := tc["extra_content"].(map[string]any)
			g, _ := ec["google"].(map[string]any)
			if want := c.s.signatureOf(str(tc["id"])); want != "" && str(g["thought_signature"]) != want {
				fn, _ := tc["function"].(map[string]any)
				return fakekit.Refuse("Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:%s` , position 2. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.", str(fn["name"]))
			}
		}
	}
	return nil
}

// signatureOf is the signature this server gave a chat tool call, or "".
func (s *Server) signatureOf(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sigs[id]
}
