package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine/provider/anthropic/anthropictest"
	"github.com/coda-acp/coda/engine/provider/gemini/geminitest"
	"github.com/coda-acp/coda/engine/provider/ollama/ollamatest"
	"github.com/coda-acp/coda/engine/provider/openai/openaitest"
)

// The answer's shape at the source (DESIGN §17), through the real engine
// against each API's fake server: the bodies each one receives for every
// mechanism, and the fall-back when a server refuses one.

// shapeBlueprint's one stage offers only submit_output: every call is the
// answer call. Its schema fits both strict subsets.
const shapeBlueprint = `
[agent]
name = "shape"
[stages.answer]
mode = "output"
[stages.answer.output]
format = "json"
schema = { type = "object", additionalProperties = false, required = ["answer"], properties = { answer = { type = "integer" } } }
`

// The model answers in its reply when it has no tools, else through
// submit_output (argsFor).
const shapeReply = `{"answer": 42}`

// shapeSchema is the blueprint's schema as the engine sends it: the inline
// table encoded.
const shapeSchema = `{"additionalProperties":false,"properties":{"answer":{"type":"integer"}},"required":["answer"],"type":"object"}`

// shapeProjected is the same schema as a strict family's projection of it
// sends it (DESIGN §17): the same schema, its members in the projection's
// order. The servers with a field of their own (vLLM, llama.cpp) are sent
// it too: their replies are read back through it.
const shapeProjected = `{"type":"object","properties":{"answer":{"type":"integer"}},"required":["answer"],"additionalProperties":false}`

// argsFor is what the model hands submit_output in a request body: the
// answer's value where content is typed, else the JSON text as a string.
func argsFor(body []byte) string {
	if strings.Contains(string(body), `"content":{"type":"string"`) {
		return `{"content":"{\"answer\":42}"}`
	}
	return `{"content":{"answer":42}}`
}

// A shapeFake is one API's fake, started for a case: the config's
// provider table and what the fake saw.
type shapeFake struct {
	table string
	seen  func() []e2eSeen
}

// refuses names the mechanism a case's fake lacks: "" none.
type shapeAPI struct {
	name, model string
	// start starts the fake, lacking the mechanism refuse ("" none).
	start func(t *testing.T, refuse string) shapeFake
}

func shapeOpenAI(api string) shapeAPI { return shapeOpenAIOf(api, "") }

// shapeOpenAIOf is shapeOpenAI whose fake is the named server's ("" is
// OpenAI's).
func shapeOpenAIOf(api, server string) shapeAPI {
	return shapeAPI{name: api, model: "test:gpt-5.4", start: func(t *testing.T, refuse string) shapeFake {
		f := openaitest.NewServer()
		t.Cleanup(f.Close)
		f.Server = server
		f.NoStrict, f.NoToolChoice, f.NoResponseFormat = refuse == "strict", refuse == "tool_choice", refuse == "reply_format"
		f.Reply = func(_ int, r *openaitest.Request) openaitest.Turn {
			if r.Body["tools"] == nil {
				return openaitest.Turn{Text: shapeReply}
			}
			return openaitest.Turn{Calls: []openaitest.Call{{Name: "submit_output", Args: argsFor(r.Raw)}}}
		}
		return shapeFake{
			table: fmt.Sprintf("[providers.test]\nkind = \"openai\"\napi = %q\nbase_url = %q\napi_key_env = \"\"\n", api, f.URL),
			seen: func() (out []e2eSeen) {
				for _, r := range f.Requests() {
					out = append(out, e2eSeen{string(r.Raw), r.Refused})
				}
				return out
			},
		}
	}}
}

// shapeServer is an OpenAI-style chat server the config names
// (server = "vllm" | "llama.cpp"), whose fake holds its own fields to its
// rules.
func shapeServer(server string) shapeAPI {
	api := shapeOpenAIOf("chat", server)
	start := api.start
	api.name = server
	api.model = "test:qwen3"
	api.start = func(t *testing.T, refuse string) shapeFake {
		fake := start(t, refuse)
		fake.table += fmt.Sprintf("server = %q\n", server)
		return fake
	}
	return api
}

func shapeAnthropic(name, model, effort string) shapeAPI {
	return shapeAPI{name: name, model: "test:" + model, start: func(t *testing.T, refuse string) shapeFake {
		f := anthropictest.NewServer()
		t.Cleanup(f.Close)
		f.NoStrict, f.NoJSONOutputs = refuse == "strict", refuse == "reply_format"
		f.Reply = func(n int, r *anthropictest.Request) anthropictest.Turn {
			if len(r.Body.Tools) == 0 {
				return anthropictest.Turn{Blocks: []anthropictest.Block{anthropictest.Text(shapeReply)}}
			}
			return anthropictest.Turn{Blocks: []anthropictest.Block{anthropictest.ToolUse(fmt.Sprintf("toolu_%d", n), "submit_output", argsFor(r.Raw))}}
		}
		table := fmt.Sprintf("[providers.test]\nkind = \"anthropic\"\nbase_url = %q\napi_key_env = \"\"\n", f.URL)
		if effort != "" {
			table += "effort = " + fmt.Sprintf("%q", effort) + "\n"
		}
		return shapeFake{table: table, seen: func() (out []e2eSeen) {
			for _, r := range f.Requests() {
				out = append(out, e2eSeen{string(r.Raw), r.Refused})
			}
			return out
		}}
	}}
}

func shapeGemini(model string) shapeAPI {
	return shapeAPI{name: "gemini", model: "test:" + model, start: func(t *testing.T, refuse string) shapeFake {
		f := geminitest.NewServer()
		t.Cleanup(f.Close)
		f.Reply = func(_ int, r *geminitest.Request) geminitest.Turn {
			if len(r.Body.Tools) == 0 {
				return geminitest.Turn{Text: shapeReply}
			}
			return geminitest.Turn{Calls: []geminitest.Call{{Name: "submit_output", Args: argsFor(r.Raw)}}}
		}
		return shapeFake{
			table: fmt.Sprintf("[providers.test]\nkind = \"gemini\"\nbase_url = %q\napi_key_env = \"\"\n", f.URL),
			seen: func() (out []e2eSeen) {
				for _, r := range f.Requests() {
					out = append(out, e2eSeen{string(r.Raw), r.Refused})
				}
				return out
			},
		}
	}}
}

func shapeOllama() shapeAPI {
	return shapeAPI{name: "ollama", model: "test:qwen3:8b", start: func(t *testing.T, refuse string) shapeFake {
		f := ollamatest.NewServer(ollamatest.Model{Name: "qwen3:8b", Arch: "qwen3", ContextLength: 40960, Capabilities: []string{"completion", "tools"}})
		t.Cleanup(f.Close)
		f.NoFormatSchema = refuse == "reply_format"
		f.Reply = func(_ int, r *ollamatest.Request) ollamatest.Turn {
			if r.Body["tools"] == nil {
				return ollamatest.Turn{Text: shapeReply}
			}
			return ollamatest.Turn{Calls: []ollamatest.Call{{Name: "submit_output", Args: argsFor(r.Raw)}}}
		}
		return shapeFake{
			table: fmt.Sprintf("[providers.test]\nkind = \"ollama\"\nbase_url = %q\n", f.URL),
			seen: func() (out []e2eSeen) {
				for _, r := range f.Requests() {
					out = append(out, e2eSeen{string(r.Raw), r.Refused})
				}
				return out
			},
		}
	}}
}

// shapeTurn runs prompts turns of shapeBlueprint in one ACP session against
// fake, with the provider table's extra lines, and returns the answers'
// contents and coda's log.
func shapeTurns(t *testing.T, api shapeAPI, fake shapeFake, extra string, prompts int) (answers []string, stderr string) {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.toml")
	bp := filepath.Join(dir, "shape.toml")
	os.WriteFile(cfg, []byte(fake.table+extra), 0o600)
	os.WriteFile(bp, []byte(shapeBlueprint), 0o600)
	work := filepath.Join(dir, "work")
	os.Mkdir(work, 0o700)
	c := startACP(t, []string{"--config", cfg, "--agent", bp, "--model", api.model, "--state-dir", filepath.Join(dir, "state")})
	defer c.close()
	c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)
	c.await(0)
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":%q,"mcpServers":[]}}`, work))
	resp, _ := c.await(1)
	sid, _ := e2eDig(resp, "result", "sessionId").(string)
	for i := range prompts {
		id := float64(2 + i)
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"What is six times seven?"}]}}`, 2+i, sid))
		resp, _ := c.await(id)
		if got := e2eDig(resp, "result", "_meta", "coda", "status"); got != "answered" {
			t.Fatalf("prompt %d: status %v in %v\nstderr:\n%s", i, got, resp, c.stderr())
		}
		content, _ := e2eDig(resp, "result", "_meta", "coda", "finalOutput", "content").(string)
		answers = append(answers, content)
	}
	return answers, c.stderr()
}

// toolOf is the submit_output tool's declaration in a request body, as
// the body has it: wherever the API puts it.
func toolOf(t *testing.T, body string) string {
	t.Helper()
	var b struct {
		Tools []json.RawMessage `json:"tools"`
	}
	json.Unmarshal([]byte(body), &b)
	tools := b.Tools
	if len(tools) == 1 {
		var g struct {
			FunctionDeclarations []json.RawMessage `json:"functionDeclarations"`
		}
		if json.Unmarshal(tools[0], &g); g.FunctionDeclarations != nil {
			tools = g.FunctionDeclarations // Gemini's
		}
	}
	for _, tool := range tools {
		var named struct {
			Name     string `json:"name"`
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		}
		json.Unmarshal(tool, &named)
		if named.Name == "submit_output" || named.Function.Name == "submit_output" {
			return string(tool)
		}
	}
	t.Fatalf("no submit_output in %s", body)
	return ""
}

// The answer call: submit_output typed with the answer's schema, strict
// where the API has strict tools, forced where it can be (else said in
// words, and the reply asked in native JSON too); the answer is the typed
// value's own bytes.
func TestShape_e2e_answerCall(t *testing.T) {
	tests := []struct {
		api      shapeAPI
		want     []string // in the first request's body
		wantNot  []string
		strict   bool
		unforced bool
	}{
		{api: shapeOpenAI("chat"), strict: true, want: []string{`"tool_choice":{"type":"function","function":{"name":"submit_output"}}`}},
		{api: shapeOpenAI("responses"), strict: true, want: []string{`"tool_choice":{"type":"function","name":"submit_output"}`}},
		{api: shapeAnthropic("anthropic", "claude-sonnet-4-5", ""), strict: true, want: []string{`"tool_choice":{"type":"tool","name":"submit_output"}`}},
		// Thinking on: the API forbids a forced tool.
		{api: shapeAnthropic("anthropic-thinking", "claude-opus-4-7", "high"), strict: true, unforced: true,
			want: []string{`"output_config":{"effort":"high","format":{"type":"json_schema","schema":` + shapeProjected + `}}`}, wantNot: []string{`"tool_choice"`}},
		{api: shapeGemini("gemini-3-pro-preview"), want: []string{`"toolConfig":{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["submit_output"]}}`}},
		// No tool choice at all: the words, and a constrained reply.
		{api: shapeOllama(), unforced: true, want: []string{`"format":` + shapeSchema}, wantNot: []string{`tool_choice`}},
	}
	for _, tt := range tests {
		t.Run(tt.api.name, func(t *testing.T) {
			fake := tt.api.start(t, "")
			answers, _ := shapeTurns(t, tt.api, fake, "", 1)
			if answers[0] != `{"answer":42}` {
				t.Errorf("answer %q, want the typed value's own bytes", answers[0])
			}
			reqs := fake.seen()
			if len(reqs) != 1 || reqs[0].refused != "" {
				t.Fatalf("%d requests, refused %v", len(reqs), reqs)
			}
			body := reqs[0].body
			tool := toolOf(t, body)
			if !strings.Contains(tool, `"answer":{"type":"integer"}`) || strings.Contains(tool, `"content":{"type":"string"`) {
				t.Errorf("submit_output is not typed with the answer's schema: %s", tool)
			}
			if got := strings.Contains(tool, `"strict":true`); got != tt.strict {
				t.Errorf("strict %v, want %v: %s", got, tt.strict, tool)
			}
			if got := strings.Contains(body, "Nothing else is left to do in this stage"); got != tt.unforced {
				t.Errorf("the words said %v, want %v", got, tt.unforced)
			}
			for _, w := range tt.want {
				if !strings.Contains(body, w) {
					t.Errorf("the body lacks %s:\n%s", w, body)
				}
			}
			for _, w := range tt.wantNot {
				if strings.Contains(body, w) {
					t.Errorf("the body has %s:\n%s", w, body)
				}
			}
		})
	}
}

// A model without tools asks for its reply in the API's native JSON
// output, with the answer's schema, strict where the API has strict
// schemas.
func TestShape_e2e_nativeReply(t *testing.T) {
	const schema, projected = shapeSchema, shapeProjected
	tests := []struct {
		api  shapeAPI
		want string
	}{
		{shapeOpenAI("chat"), `"response_format":{"type":"json_schema","json_schema":{"name":"answer","schema":` + projected + `,"strict":true}}`},
		{shapeOpenAI("responses"), `"text":{"format":{"type":"json_schema","name":"answer","schema":` + projected + `,"strict":true}}`},
		{shapeAnthropic("anthropic", "claude-sonnet-4-5", ""), `"output_config":{"format":{"type":"json_schema","schema":` + projected + `}}`},
		{shapeGemini("gemini-3-pro-preview"), `"responseMimeType":"application/json","responseJsonSchema":` + schema},
		{shapeOllama(), `"format":` + schema},
		// A server the config names: its own field.
		{shapeServer("vllm"), `"structured_outputs":{"json":` + projected + `}`},
		{shapeServer("llama.cpp"), `"json_schema":` + projected},
	}
	for _, tt := range tests {
		t.Run(tt.api.name, func(t *testing.T) {
			fake := tt.api.start(t, "")
			answers, _ := shapeTurns(t, tt.api, fake, "tools = false\n", 1)
			if answers[0] != shapeReply {
				t.Errorf("answer %q", answers[0])
			}
			reqs := fake.seen()
			if len(reqs) != 1 || reqs[0].refused != "" {
				t.Fatalf("%d requests, refused %v", len(reqs), reqs)
			}
			if !strings.Contains(reqs[0].body, tt.want) {
				t.Errorf("the body lacks %s:\n%s", tt.want, reqs[0].body)
			}
			if strings.Contains(reqs[0].body, `"tools"`) {
				t.Errorf("tools sent to a model without them:\n%s", reqs[0].body)
			}
		})
	}
}

// A server that refuses a mechanism has the call made again without it,
// with one warning, and the session asks without it from then on; the
// answer is checked as always.
func TestShape_e2e_refused(t *testing.T) {
	tests := []struct {
		api            shapeAPI
		refuse, extra  string
		gone, stays    string // in the retried body: what went, what stayed
		warnsMechanism string
	}{
		{api: shapeOpenAI("chat"), refuse: "strict", gone: `"strict":true`, stays: `"tool_choice":{"type":"function"`, warnsMechanism: "strict schemas"},
		{api: shapeOpenAI("responses"), refuse: "tool_choice", gone: `"tool_choice"`, stays: `"strict":true`, warnsMechanism: "a forced tool choice"},
		// A Responses server without strict mode refuses the field itself,
		// which the API's default (strict) has sent even as false.
		{api: shapeOpenAI("responses"), refuse: "strict", gone: `"strict"`, stays: `"tool_choice":{"type":"function"`, warnsMechanism: "strict schemas"},
		{api: shapeOpenAI("chat"), refuse: "reply_format", extra: "tools = false\n", gone: `"response_format"`, warnsMechanism: "a constrained reply format"},
		{api: shapeAnthropic("anthropic", "claude-sonnet-4-5", ""), refuse: "strict", gone: `"strict":true`, stays: `"tool_choice":{"type":"tool"`, warnsMechanism: "strict schemas"},
		{api: shapeAnthropic("anthropic", "claude-sonnet-4-5", ""), refuse: "reply_format", extra: "tools = false\n", gone: `"output_config"`, warnsMechanism: "a constrained reply format"},
		{api: shapeOllama(), refuse: "reply_format", extra: "tools = false\n", gone: `"format"`, warnsMechanism: "a constrained reply format"},
		{api: shapeServer("vllm"), refuse: "reply_format", extra: "tools = false\n", gone: `"structured_outputs"`, warnsMechanism: "a constrained reply format"},
		{api: shapeServer("llama.cpp"), refuse: "reply_format", extra: "tools = false\n", gone: `"json_schema"`, warnsMechanism: "a constrained reply format"},
	}
	for _, tt := range tests {
		t.Run(tt.api.name+"/"+tt.refuse+tt.extra, func(t *testing.T) {
			fake := tt.api.start(t, tt.refuse)
			answers, stderr := shapeTurns(t, tt.api, fake, tt.extra, 2)
			for i, a := range answers {
				if a != `{"answer":42}` && a != shapeReply {
					t.Errorf("answer %d: %q", i, a)
				}
			}
			reqs := fake.seen()
			if len(reqs) != 3 || reqs[0].refused == "" || reqs[1].refused != "" || reqs[2].refused != "" {
				t.Fatalf("%d requests (want refused, retried, the next turn's): %v", len(reqs), reqs)
			}
			for _, r := range reqs[1:] {
				if strings.Contains(r.body, tt.gone) || tt.stays != "" && !strings.Contains(r.body, tt.stays) {
					t.Errorf("a later request (without %s, with %s):\n%s", tt.gone, tt.stays, r.body)
				}
			}
			if n := strings.Count(stderr, "coda asks it without for the rest of the session"); n != 1 || !strings.Contains(stderr, "refused "+tt.warnsMechanism) {
				t.Errorf("%d warnings, want one about %s:\n%s", n, tt.warnsMechanism, stderr)
			}
		})
	}
}

// Gemini 2.x refuses a JSON reply beside function declarations, Gemini 3
// takes it: a native answer call with tools asks for one of Gemini 3
// only, and Gemini 2.5 is never sent the request its fake would refuse
// (nor warned about it).
func TestShape_e2e_geminiJSONWithTools(t *testing.T) {
	for _, tt := range []struct {
		model string
		json  bool
	}{{"gemini-2.5-flash", false}, {"gemini-3-pro-preview", true}} {
		t.Run(tt.model, func(t *testing.T) {
			api := shapeGemini(tt.model)
			fake := api.start(t, "")
			_, stderr := shapeTurns(t, api, fake, "structured = \"native\"\n", 2)
			reqs := fake.seen()
			if len(reqs) != 2 {
				t.Fatalf("%d requests, want one a turn (the first refused: %q)", len(reqs), reqs[0].refused)
			}
			for _, r := range reqs {
				if r.refused != "" || !strings.Contains(r.body, `"functionDeclarations"`) {
					t.Errorf("refused %q, or no functions: %s", r.refused, r.body)
				}
				if got := strings.Contains(r.body, `"responseMimeType":"application/json"`); got != tt.json {
					t.Errorf("a JSON reply asked %v, want %v: %s", got, tt.json, r.body)
				}
			}
			if strings.Contains(stderr, "refused") {
				t.Errorf("a warning:\n%s", stderr)
			}
		})
	}
}

// structured = "prompted" on the provider is today's behaviour: a string
// content, nothing strict, nothing forced.
func TestShape_e2e_prompted(t *testing.T) {
	api := shapeOpenAI("chat")
	fake := api.start(t, "")
	shapeTurns(t, api, fake, "structured = \"prompted\"\n", 1)
	body := fake.seen()[0].body
	tool := toolOf(t, body)
	if !strings.Contains(tool, `"content":{"type":"string"`) || strings.Contains(tool, `"strict":true`) || strings.Contains(body, `"tool_choice"`) {
		t.Errorf("a prompted call: %s", body)
	}
}

// OpenAI's refusal ends the turn unavailable, in the model's words.
func TestShape_e2e_refusal(t *testing.T) {
	f := openaitest.NewServer()
	t.Cleanup(f.Close)
	f.Reply = func(int, *openaitest.Request) openaitest.Turn {
		return openaitest.Turn{Refusal: "I can't help with that request."}
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.toml")
	bp := filepath.Join(dir, "shape.toml")
	os.WriteFile(cfg, []byte(fmt.Sprintf("[providers.test]\nkind = \"openai\"\nbase_url = %q\napi_key_env = \"\"\n", f.URL)), 0o600)
	os.WriteFile(bp, []byte(shapeBlueprint), 0o600)
	c := startACP(t, []string{"--config", cfg, "--agent", bp, "--model", "test:gpt-5.4", "--state-dir", filepath.Join(dir, "state")})
	defer c.close()
	c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)
	c.await(0)
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":%q,"mcpServers":[]}}`, dir))
	resp, _ := c.await(1)
	sid, _ := e2eDig(resp, "result", "sessionId").(string)
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"Go."}]}}`, sid))
	resp, _ = c.await(2)
	if got := e2eDig(resp, "result", "_meta", "coda", "status"); got != "unavailable" {
		t.Errorf("status %v: %v", got, resp)
	}
	if got := e2eDig(resp, "result", "_meta", "coda", "unavailable"); got != "I can't help with that request." {
		t.Errorf("unavailable %v: %v", got, resp)
	}
	if got := e2eDig(resp, "result", "stopReason"); got != "refusal" {
		t.Errorf("stopReason %v", got)
	}
}
