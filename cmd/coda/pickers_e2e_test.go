package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine/provider/openai/openaitest"
)

// The effort option through the real catalog and a provider's fake
// (DESIGN §16): it offers the levels GPT-5.4 takes with the config's level
// current; a level it does not take is refused naming those it takes; the
// level picked is what the Responses API is sent.
func TestEffortOption_e2e(t *testing.T) {
	f := openaitest.NewServer()
	t.Cleanup(f.Close)
	f.Reply = func(int, *openaitest.Request) openaitest.Turn {
		return openaitest.Turn{Calls: []openaitest.Call{{Name: "submit_output", Args: `{"content":"done"}`}}}
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.toml")
	os.WriteFile(cfg, []byte(fmt.Sprintf("[providers.test]\nkind = \"openai\"\napi = \"responses\"\nbase_url = %q\neffort = \"high\"\n", f.URL)), 0o600)
	c := startACP(t, []string{"--config", cfg, "--model", "test:gpt-5.4", "--state-dir", filepath.Join(dir, "state")})
	c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)
	c.await(0)
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":%q,"mcpServers":[]}}`, dir))
	resp, _ := c.await(1)
	sid, _ := e2eDig(resp, "result", "sessionId").(string)
	effort := optionOf(t, resp, "effort")
	if effort["category"] != "thought_level" || effort["currentValue"] != "high" || optionValues(effort) != "off low medium high xhigh" {
		t.Errorf("the effort option: %v", effort)
	}

	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"session/set_config_option","params":{"sessionId":%q,"configId":"effort","value":"max"}}`, sid))
	msg := c.awaitAny(2)
	if got := fmt.Sprint(e2eDig(msg, "error", "message")); e2eDig(msg, "error", "code") != float64(-32602) || got != `invalid params: effort "max": model test:gpt-5.4 takes off, low, medium, high, xhigh` {
		t.Errorf("set effort max: %v", msg)
	}
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"session/set_config_option","params":{"sessionId":%q,"configId":"effort","value":"xhigh"}}`, sid))
	resp, _ = c.await(3)
	if got := optionOf(t, resp, "effort")["currentValue"]; got != "xhigh" {
		t.Errorf("after set effort xhigh, the option shows %v", got)
	}
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"Go."}]}}`, sid))
	resp, _ = c.await(4)
	if got := e2eDig(resp, "result", "_meta", "coda", "status"); got != "answered" {
		t.Fatalf("status %v: %v\n%s", got, resp, c.stderr())
	}
	c.close()
	reqs := f.Requests()
	if len(reqs) != 1 || !strings.Contains(string(reqs[0].Raw), `"reasoning":{"effort":"xhigh"`) {
		t.Errorf("the call did not ask for xhigh: %d requests, %s", len(reqs), reqs[0].Raw)
	}
}

// The live model list through the real serve and a provider's fake
// (DESIGN §16): the models the provider lists reach the model option (in
// session/new's answer, or in a config_option_update after it), the
// embedding model left out and the tool-less one marked; picking a listed
// model works, and its next call goes to it.
func TestListedModels_e2e(t *testing.T) {
	f := openaitest.NewServer()
	t.Cleanup(f.Close)
	no := false
	f.Models = []openaitest.Model{{ID: "gpt-5.5"}, {ID: "text-embedding-3-small"}, {ID: "qwen3-32b", Tools: &no}, {ID: "devstral-small"}}
	f.Reply = func(int, *openaitest.Request) openaitest.Turn { return openaitest.Turn{Text: "Done."} }
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.toml")
	os.WriteFile(cfg, []byte(fmt.Sprintf("[providers.lab]\nkind = \"openai\"\nbase_url = %q\n", f.URL)), 0o600)
	c := startACP(t, []string{"--config", cfg, "--model", "lab:gpt-5.5", "--state-dir", filepath.Join(dir, "state")})
	c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)
	c.await(0)
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":%q,"mcpServers":[]}}`, dir))
	resp, _ := c.await(1)
	sid, _ := e2eDig(resp, "result", "sessionId").(string)
	model := optionOf(t, resp, "model")
	if optionValues(model) == "lab:gpt-5.5" {
		// The list came after the answer: an update brings it.
		for {
			msg := c.next()
			if up, _ := e2eDig(msg, "params", "update").(map[string]any); up["sessionUpdate"] == "config_option_update" {
				model = optionOf(t, map[string]any{"result": up}, "model")
				break
			}
		}
	}
	if got := optionValues(model); got != "lab:gpt-5.5 lab:qwen3-32b lab:devstral-small" {
		t.Errorf("the model option offers %q", got)
	}
	if b, _ := json.Marshal(model); !strings.Contains(string(b), `{"name":"lab:qwen3-32b (no tools)","value":"lab:qwen3-32b"}`) {
		t.Errorf("the tool-less model is not marked: %s", b)
	}
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"session/set_config_option","params":{"sessionId":%q,"configId":"model","value":"lab:devstral-small"}}`, sid))
	resp, _ = c.await(2)
	if got := optionOf(t, resp, "model")["currentValue"]; got != "lab:devstral-small" {
		t.Errorf("after set model, the option shows %v", got)
	}
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"Go."}]}}`, sid))
	c.await(3)
	c.close()
	reqs := f.Requests()
	if len(reqs) == 0 || !strings.Contains(string(reqs[0].Raw), `"model":"devstral-small"`) {
		t.Errorf("the call did not go to the model picked: %d requests", len(reqs))
	}
}

// optionOf is the config option id of a session/new or set_config_option
// response.
func optionOf(t *testing.T, resp map[string]any, id string) map[string]any {
	t.Helper()
	opts, _ := e2eDig(resp, "result", "configOptions").([]any)
	for _, o := range opts {
		if o, _ := o.(map[string]any); o["id"] == id {
			return o
		}
	}
	b, _ := json.Marshal(resp)
	t.Fatalf("no option %s in %s", id, b)
	return nil
}

// optionValues are a select option's values, space-separated.
func optionValues(opt map[string]any) string {
	var values []string
	choices, _ := opt["options"].([]any)
	for _, o := range choices {
		o, _ := o.(map[string]any)
		values = append(values, fmt.Sprint(o["value"]))
	}
	return strings.Join(values, " ")
}

// awaitAny reads lines until the response to id, an error or not.
func (c *acpClient) awaitAny(id float64) map[string]any {
	for {
		if msg := c.next(); msg["id"] == id && msg["method"] == nil {
			return msg
		}
	}
}
