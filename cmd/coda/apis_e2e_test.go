package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coda-acp/coda/engine/provider/anthropic/anthropictest"
	"github.com/coda-acp/coda/engine/provider/gemini/geminitest"
	"github.com/coda-acp/coda/engine/provider/ollama/ollamatest"
	"github.com/coda-acp/coda/engine/provider/openai/openaitest"
)

// A step is what the scripted model does on one call, whatever the API.
type step struct {
	reasoning, text string
	calls           [][2]string // name, arguments
	hold            bool        // the reply never ends: the client must cancel
	usage           [2]int      // input, output tokens
}

// The turn every API plays (TestAPIs_e2e): the model reasons and reads a
// file, then submits an answer the schema refuses, then a good one; the
// next prompt's reply never ends, and is cancelled.
var e2eSteps = []step{
	{reasoning: "The notes hold the factors.", text: "Reading the notes.", calls: [][2]string{{"read_file", `{"path":"notes.txt"}`}}, usage: [2]int{1200, 40}},
	{reasoning: "Six times seven.", calls: [][2]string{{"submit_output", `{"content":"{\"answer\": \"forty-two\"}"}`}}, usage: [2]int{1400, 30}},
	{calls: [][2]string{{"submit_output", `{"content":"{\"answer\": 42}"}`}}, usage: [2]int{1600, 20}},
	{text: "Thinking about the next one", hold: true},
}

// An e2eAPI is one provider API with its fake server.
type e2eAPI struct {
	name, model string
	// start starts the fake, serving steps in order, and returns the
	// config's provider table, what the fake saw, and a function that
	// stops the fake (waiting for its handlers) and counts the replies
	// whose client went away.
	start func(t *testing.T) (table string, seen func() []e2eSeen, cancelled func() int)
}

// e2eSeen is one request the fake got: its body as text, and the rule
// that refused it ("" when it was served).
type e2eSeen struct {
	body, refused string
}

func openaiAPI(name, api, model string) e2eAPI {
	return e2eAPI{name: name, model: "test:" + model, start: func(t *testing.T) (string, func() []e2eSeen, func() int) {
		f := openaitest.NewServer()
		t.Cleanup(f.Close)
		f.Gemini = name == "gemini-openai" // thought signatures in extra_content, refused when not sent back
		f.Key = "e2e-secret-key-0123"
		f.Reply = func(n int, _ *openaitest.Request) openaitest.Turn {
			s := e2eSteps[min(n, len(e2eSteps)-1)]
			turn := openaitest.Turn{Reasoning: s.reasoning, Text: s.text, Hold: s.hold, Usage: openaitest.Usage{Input: s.usage[0], Output: s.usage[1]}}
			for _, c := range s.calls {
				turn.Calls = append(turn.Calls, openaitest.Call{Name: c[0], Args: c[1]})
			}
			return turn
		}
		table := fmt.Sprintf("[providers.test]\nkind = \"openai\"\napi = %q\nbase_url = %q\napi_key_env = \"CODA_E2E_KEY\"\neffort = \"high\"\ncontext_windows = { %q = 400000 }\n", api, f.URL, model)
		seen := func() []e2eSeen {
			var out []e2eSeen
			for _, r := range f.Requests() {
				out = append(out, e2eSeen{string(r.Raw), r.Refused})
			}
			return out
		}
		return table, seen, func() int { f.Close(); return f.Cancelled() }
	}}
}

func ollamaAPI() e2eAPI {
	return e2eAPI{name: "ollama", model: "test:qwen3:8b", start: func(t *testing.T) (string, func() []e2eSeen, func() int) {
		f := ollamatest.NewServer(ollamatest.Model{Name: "qwen3:8b", Arch: "qwen3", ContextLength: 40960, Capabilities: []string{"completion", "tools", "thinking"}})
		t.Cleanup(f.Close)
		f.Reply = func(n int, r *ollamatest.Request) ollamatest.Turn {
			if r.Truncated {
				return ollamatest.Turn{Text: "The start of this conversation is gone."}
			}
			s := e2eSteps[min(n, len(e2eSteps)-1)]
			turn := ollamatest.Turn{Thinking: s.reasoning, Text: s.text, Hold: s.hold, Output: s.usage[1]}
			for _, c := range s.calls {
				turn.Calls = append(turn.Calls, ollamatest.Call{Name: c[0], Args: c[1]})
			}
			return turn
		}
		table := fmt.Sprintf("[providers.test]\nkind = \"ollama\"\nbase_url = %q\neffort = \"high\"\n", f.URL)
		seen := func() []e2eSeen {
			var out []e2eSeen
			for _, r := range f.Requests() {
				out = append(out, e2eSeen{string(r.Raw), r.Refused})
			}
			return out
		}
		return table, seen, func() int { f.Close(); return f.Cancelled() }
	}}
}

func anthropicAPI() e2eAPI {
	return e2eAPI{name: "anthropic", model: "test:claude-opus-4-7", start: func(t *testing.T) (string, func() []e2eSeen, func() int) {
		f := anthropictest.NewServer()
		t.Cleanup(f.Close)
		f.Key = "e2e-secret-key-0123"
		f.Reply = func(n int, _ *anthropictest.Request) anthropictest.Turn {
			s := e2eSteps[min(n, len(e2eSteps)-1)]
			turn := anthropictest.Turn{Hold: s.hold}
			if s.reasoning != "" {
				turn.Blocks = append(turn.Blocks, anthropictest.Thinking(s.reasoning))
			}
			if s.text != "" {
				turn.Blocks = append(turn.Blocks, anthropictest.Text(s.text))
			}
			for i, c := range s.calls {
				turn.Blocks = append(turn.Blocks, anthropictest.ToolUse(fmt.Sprintf("toolu_%d_%d", n, i), c[0], c[1]))
			}
			return turn
		}
		table := fmt.Sprintf("[providers.test]\nkind = \"anthropic\"\nbase_url = %q\napi_key_env = \"CODA_E2E_KEY\"\neffort = \"high\"\n", f.URL)
		seen := func() []e2eSeen {
			var out []e2eSeen
			for _, r := range f.Requests() {
				out = append(out, e2eSeen{string(r.Raw), r.Refused})
			}
			return out
		}
		return table, seen, func() int { f.Close(); return f.Cancelled() }
	}}
}

func geminiAPI() e2eAPI {
	return e2eAPI{name: "gemini", model: "test:gemini-3-pro-preview", start: func(t *testing.T) (string, func() []e2eSeen, func() int) {
		f := geminitest.NewServer()
		t.Cleanup(f.Close)
		f.Key = "e2e-secret-key-0123"
		f.Reply = func(n int, _ *geminitest.Request) geminitest.Turn {
			s := e2eSteps[min(n, len(e2eSteps)-1)]
			turn := geminitest.Turn{Thought: s.reasoning, Text: s.text, Hold: s.hold,
				Usage: geminitest.Usage{Prompt: s.usage[0], Cached: s.usage[0] / 2, Candidates: s.usage[1]}}
			for _, c := range s.calls {
				turn.Calls = append(turn.Calls, geminitest.Call{Name: c[0], Args: c[1]})
			}
			return turn
		}
		table := fmt.Sprintf("[providers.test]\nkind = \"gemini\"\nbase_url = %q\napi_key_env = \"CODA_E2E_KEY\"\neffort = \"high\"\n", f.URL)
		seen := func() []e2eSeen {
			var out []e2eSeen
			for _, r := range f.Requests() {
				out = append(out, e2eSeen{string(r.Raw), r.Refused})
			}
			return out
		}
		return table, seen, func() int { f.Close(); return f.Cancelled() }
	}}
}

// A whole turn through the real engine against each API's fake server,
// which holds every request to the API's documented rules: the model
// reasons (streamed as thought chunks), calls a tool, submits an answer the
// schema refuses and then one it takes; usage reaches the editor; the next
// prompt is cancelled mid-stream and answered "cancelled"; the key is in
// no log.
func TestAPIs_e2e(t *testing.T) {
	for _, api := range []e2eAPI{openaiAPI("chat", "chat", "gpt-5.4"), openaiAPI("gemini-openai", "chat", "gemini-3-pro-preview"), openaiAPI("responses", "responses", "gpt-5.4"), ollamaAPI(), anthropicAPI(), geminiAPI()} {
		t.Run(api.name, func(t *testing.T) {
			table, seen, cancelled := api.start(t)
			dir := t.TempDir()
			cfg := filepath.Join(dir, "config.toml")
			os.WriteFile(cfg, []byte(table), 0o600)
			t.Setenv("CODA_E2E_KEY", "e2e-secret-key-0123")
			work := filepath.Join(dir, "work")
			os.Mkdir(work, 0o700)
			os.WriteFile(filepath.Join(work, "notes.txt"), []byte("The factors are six and seven.\n"), 0o600)

			c := startACP(t, []string{"--config", cfg, "--model", api.model, "--state-dir", filepath.Join(dir, "state"),
				"--output-format", "json", "--output-schema", `{"type":"object","properties":{"answer":{"type":"integer"}},"required":["answer"]}`})
			c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)
			c.await(0)
			c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":%q,"mcpServers":[]}}`, work))
			resp, _ := c.await(1)
			sid, _ := e2eDig(resp, "result", "sessionId").(string)
			if sid == "" {
				t.Fatalf("session/new: %v", resp)
			}
			c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"What is six times seven? Read notes.txt."}]}}`, sid))
			resp, updates := c.await(2)
			if got := e2eDig(resp, "result", "_meta", "coda", "status"); got != "answered" {
				t.Fatalf("status %v in %v\nstderr:\n%s", got, resp, c.stderr())
			}
			if got := e2eDig(resp, "result", "_meta", "coda", "finalOutput", "content"); got != `{"answer": 42}` && got != `{"answer":42}` {
				t.Errorf("finalOutput.content %q", got)
			}
			var thoughts strings.Builder
			kinds := map[string]int{}
			var usage []any
			cacheReads := 0 // usage updates that carry prompt-cache reads
			for _, u := range updates {
				up, _ := e2eDig(u, "params", "update").(map[string]any)
				kind, _ := up["sessionUpdate"].(string)
				kinds[kind]++
				switch kind {
				case "agent_thought_chunk":
					text, _ := e2eDig(up, "content", "text").(string)
					thoughts.WriteString(text)
				case "usage_update":
					usage = append(usage, up["size"])
					if n, _ := e2eDig(up, "_meta", "coda", "cacheReadTokens").(float64); n > 0 {
						cacheReads++
					}
				}
			}
			if !strings.Contains(thoughts.String(), "The notes hold the factors.") || !strings.Contains(thoughts.String(), "Six times seven.") {
				t.Errorf("thought chunks %q", thoughts.String())
			}
			if kinds["tool_call"] == 0 || len(usage) == 0 {
				t.Errorf("updates by kind %v, usage %v", kinds, usage)
			}
			requests := seen()
			for i, r := range requests {
				if r.refused != "" {
					t.Errorf("request %d refused by the API's rules: %s", i, r.refused)
				}
			}
			if len(requests) != 3 {
				t.Fatalf("%d model calls, want 3", len(requests))
			}
			if !strings.Contains(requests[1].body, "The factors are six and seven.") {
				t.Errorf("the tool's result did not reach the second call: %s", requests[1].body)
			}
			if !strings.Contains(requests[2].body, "forty-two") || !strings.Contains(requests[2].body, "integer") {
				t.Errorf("the refusal did not reach the third call: %s", requests[2].body)
			}
			switch api.name {
			case "chat":
				// GPT-5.4 takes tools on chat completions only without
				// reasoning: the config's effort is not sent (the fake
				// refuses it, as OpenAI does).
				if !strings.Contains(requests[0].body, `"reasoning_effort":"none"`) {
					t.Errorf("the first chat call: %s", requests[0].body)
				}
				if !strings.Contains(c.stderr(), "takes no reasoning effort with tools") {
					t.Errorf("the effort dropped was not said:\n%s", c.stderr())
				}
			case "gemini-openai":
				if !strings.Contains(requests[1].body, `"extra_content":{"google":{"thought_signature":`) {
					t.Errorf("the second call sent no signature back: %s", requests[1].body)
				}
			case "responses":
				if !strings.Contains(requests[0].body, `"reasoning":{"effort":"high","summary":"auto"}`) {
					t.Errorf("the first Responses call: %s", requests[0].body)
				}
				// The second call sends the first one's reasoning back, encrypted.
				if !strings.Contains(requests[1].body, `"encrypted_content"`) || !strings.Contains(requests[1].body, `"store":false`) {
					t.Errorf("the second Responses call: %s", requests[1].body)
				}
			case "ollama":
				if !strings.Contains(requests[0].body, `"num_ctx":40960`) || !strings.Contains(requests[0].body, `"think":true`) {
					t.Errorf("the first Ollama call: %s", requests[0].body)
				}
			case "anthropic":
				// Opus 4.7 thinks adaptively (a budget is a 400 from the
				// fake); the signed thinking goes back; the prompt is cached.
				if !strings.Contains(requests[0].body, `"thinking":{"type":"adaptive","display":"summarized"}`) || !strings.Contains(requests[0].body, `"output_config":{"effort":"high"}`) {
					t.Errorf("the first Anthropic call: %s", requests[0].body)
				}
				if !strings.Contains(requests[1].body, `"type":"thinking","thinking":"The notes hold the factors.","signature":`) || !strings.Contains(requests[1].body, `"cache_control":{"type":"ephemeral"}`) {
					t.Errorf("the second Anthropic call: %s", requests[1].body)
				}
			case "gemini":
				if !strings.Contains(requests[0].body, `"thinkingConfig":{"includeThoughts":true,"thinkingLevel":"high"}`) {
					t.Errorf("the first Gemini call: %s", requests[0].body)
				}
				// The first call's signature goes back on its function call:
				// the one the fake gave, not the skip value (which the fake
				// takes, as Gemini does, for a call it did not sign).
				sig := regexp.MustCompile(`\{"thoughtSignature":"([^"]+)","functionCall":\{"name":"read_file"`).FindStringSubmatch(requests[1].body)
				if sig == nil || sig[1] == "skip_thought_signature_validator" {
					t.Errorf("the second Gemini call sent the first one's signature not back: %s", requests[1].body)
				}
			}
			cached := api.name == "anthropic" || api.name == "gemini"
			if cached && cacheReads == 0 {
				// The cache's tokens reach the editor (and the run record:
				// below, once coda has ended, its records finished).
				t.Errorf("no usage_update carries the cache's read tokens")
			}

			// The next prompt streams, never ends, and is cancelled.
			c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"And the next?"}]}}`, sid))
			c.awaitUpdate("Thinking")
			c.send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":%q}}`, sid))
			resp, _ = c.await(3)
			if got := e2eDig(resp, "result", "stopReason"); got != "cancelled" {
				t.Errorf("stopReason %v after cancel: %v", got, resp)
			}
			c.close()
			if got := recordedCacheReads(t, filepath.Join(dir, "state")); cached && got == 0 {
				t.Errorf("no cache read tokens in the run record")
			}
			if strings.Contains(c.stderr(), "e2e-secret-key-0123") {
				t.Errorf("the key is in the log:\n%s", c.stderr())
			}
			if cancelled() != 1 {
				t.Errorf("the fake saw %d cancelled replies, want 1", cancelled())
			}
		})
	}
}

// recordedCacheReads sums the cache read tokens the run records under
// state report for their model calls.
func recordedCacheReads(t *testing.T, state string) int {
	t.Helper()
	total := 0
	filepath.WalkDir(state, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "status.json" {
			return nil
		}
		var st struct {
			Calls []struct {
				Usage struct {
					CacheReadTokens int `json:"cacheReadTokens"`
				} `json:"usage"`
			} `json:"calls"`
		}
		b, _ := os.ReadFile(path)
		json.Unmarshal(b, &st)
		for _, c := range st.Calls {
			total += c.Usage.CacheReadTokens
		}
		return nil
	})
	return total
}

// acpClient drives coda as an editor does, over pipes.
type acpClient struct {
	t      *testing.T
	ctx    context.Context
	stdin  *io.PipeWriter
	lines  chan map[string]any
	done   chan error
	mu     sync.Mutex
	errOut strings.Builder
}

func startACP(t *testing.T, args []string) *acpClient {
	// Served coda lists the models of every provider whose key is set
	// (discover.go): no real one may be reached from a test.
	for _, k := range []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"} {
		t.Setenv(k, "")
	}
	t.Setenv("OLLAMA_HOST", "127.0.0.1:1")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a hang detector
	t.Cleanup(cancel)
	stdinR, stdinW := io.Pipe()
	stdoutR, stdoutW := io.Pipe()
	c := &acpClient{t: t, ctx: ctx, stdin: stdinW, lines: make(chan map[string]any, 64), done: make(chan error, 1)}
	go func() {
		err := run(ctx, args, stdinR, stdoutW, lockedWriter{c})
		stdoutW.Close()
		c.done <- err
	}()
	go func() {
		defer close(c.lines)
		sc := bufio.NewScanner(stdoutR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var msg map[string]any
			if err := json.Unmarshal(sc.Bytes(), &msg); err != nil {
				t.Errorf("stdout line is not JSON: %s", sc.Bytes())
				continue
			}
			c.lines <- msg
		}
	}()
	return c
}

type lockedWriter struct{ c *acpClient }

func (w lockedWriter) Write(p []byte) (int, error) {
	w.c.mu.Lock()
	defer w.c.mu.Unlock()
	return w.c.errOut.Write(p)
}

func (c *acpClient) stderr() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.errOut.String()
}

func (c *acpClient) send(s string) {
	if _, err := io.WriteString(c.stdin, s+"\n"); err != nil {
		c.t.Fatal(err)
	}
}

// next is the next line coda wrote.
func (c *acpClient) next() map[string]any {
	select {
	case msg, ok := <-c.lines:
		if !ok {
			c.t.Fatalf("stdout ended; stderr:\n%s", c.stderr())
		}
		if msg["method"] != nil && msg["id"] != nil {
			c.t.Fatalf("unexpected request from coda: %v", msg)
		}
		return msg
	case <-c.ctx.Done():
		c.t.Fatalf("no reply; stderr:\n%s", c.stderr())
	}
	return nil
}

// await reads lines until the response to id, returning it and the
// updates seen on the way.
func (c *acpClient) await(id float64) (resp map[string]any, updates []map[string]any) {
	for {
		msg := c.next()
		if msg["id"] == id && msg["method"] == nil {
			if msg["error"] != nil {
				c.t.Fatalf("response to %v: %v", id, msg)
			}
			return msg, updates
		}
		if msg["method"] == "session/update" {
			updates = append(updates, msg)
		}
	}
}

// awaitUpdate reads lines until an update whose text contains s.
func (c *acpClient) awaitUpdate(s string) {
	for {
		msg := c.next()
		if text, _ := e2eDig(msg, "params", "update", "content", "text").(string); strings.Contains(text, s) {
			return
		}
	}
}

// close ends stdin and waits for coda to exit.
func (c *acpClient) close() {
	c.stdin.Close()
	for range c.lines {
	}
	if err := <-c.done; err != nil {
		c.t.Errorf("run: %v; stderr:\n%s", err, c.stderr())
	}
}
