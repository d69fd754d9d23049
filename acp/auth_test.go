package acp_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/coda-acp/coda/acp"
	"github.com/coda-acp/coda/acp/acptest"
	"github.com/coda-acp/coda/engine/blueprint"
	"github.com/coda-acp/coda/engine/provider/script"
	"github.com/coda-acp/coda/engine/tools"
	"github.com/coda-acp/coda/store"
)

// authScript answers every turn at once.
var authScript = &script.Script{Turns: []script.Turn{
	{ToolCalls: []script.ToolCall{{Name: "submit_output", Arguments: map[string]any{"content": "ok"}}}},
}}

// keyless plays cmd/coda's model checks for a machine where only a local
// model (ollama:, which takes no key) can be reached: anthropic's key is
// not set. The engine's one model answers whatever is picked.
func keyless(opts acp.Options) acp.Options {
	opts.UserModel = "anthropic:claude-sonnet-4-5"
	m := &acptest.Models{PickerModels: []string{"ollama:qwen3"}}
	opts.Models = m
	m.CheckFunc = func(spec string) error {
		switch {
		case strings.HasPrefix(spec, "anthropic:"):
			return fmt.Errorf("%w: model %s needs ANTHROPIC_API_KEY", acp.ErrAuthRequired, spec)
		case strings.HasPrefix(spec, "nosuch:"):
			return errors.New(`unknown provider "nosuch"`)
		}
		return nil
	}
	m.ReachFunc = func(userModel, defaultModel string) error {
		if strings.HasPrefix(userModel, "ollama:") {
			return nil
		}
		return fmt.Errorf("model %s needs ANTHROPIC_API_KEY: set it in the environment", userModel)
	}
	return opts
}

func authServer(t *testing.T, opts acp.Options) *acp.Server {
	t.Helper()
	agent, err := blueprint.Parse([]byte(defaultBlueprint), "test")
	if err != nil {
		t.Fatal(err)
	}
	opts.Agent = agent
	e := testEngine(&opts)
	e.Models, e.Tools, e.IDs = oneModel{script.New("script:ok", authScript)}, tools.Builtin(), counter()
	e.Store = store.New(t.TempDir())
	srv, err := acp.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// received returns the line coda sent containing text; "" when none.
func received(c *client, text string) string {
	lines, _ := c.lines()
	for _, l := range lines {
		if strings.Contains(l, text) {
			return l
		}
	}
	return ""
}

// Without a key, coda still serves: initialize names what to set,
// authenticate and prompts answer -32000 with the same words, and the
// session stays usable: a model that can be reached can be picked.
func TestAuth_withoutKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, served := serve(t, context.Background(), authServer(t, keyless(acp.Options{})), t.TempDir(), nil)
		for _, line := range []string{
			`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`,
			`await "id":0`,
			`{"jsonrpc":"2.0","id":1,"method":"authenticate","params":{"methodId":"env"}}`,
			`await "id":1`,
			`{"jsonrpc":"2.0","id":2,"method":"authenticate","params":{"methodId":"oauth"}}`,
			`await "id":2`,
			`{"jsonrpc":"2.0","id":3,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}`,
			`await "id":3`,
			`{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":"s-1","prompt":[{"type":"text","text":"hi"}]}}`,
			`await "id":4`,
			`{"jsonrpc":"2.0","id":5,"method":"session/set_config_option","params":{"sessionId":"s-1","configId":"model","value":"nosuch:x"}}`,
			`await "id":5`,
			`{"jsonrpc":"2.0","id":6,"method":"session/set_config_option","params":{"sessionId":"s-1","configId":"model","value":"anthropic:claude-opus-4-1"}}`,
			`await "id":6`,
			`{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"sessionId":"s-1","prompt":[{"type":"text","text":"/model ollama:qwen3"}]}}`,
			`await "id":7`,
			`{"jsonrpc":"2.0","id":8,"method":"session/prompt","params":{"sessionId":"s-1","prompt":[{"type":"text","text":"hi again"}]}}`,
			`await "id":8`,
		} {
			c.do(line)
		}
		c.closeInput()
		if err := <-served; err != nil {
			t.Fatal(err)
		}
		c.wait()
		for _, want := range []string{
			`"id":0,"result":{"agentCapabilities":`,
			`"authMethods":[{"description":"model anthropic:claude-sonnet-4-5 needs ANTHROPIC_API_KEY: set it in the environment"`,
			`"id":"env","name":"API key from the environment"}]`,
			`"id":1,"error":{"code":-32000,"message":"authentication required: model anthropic:claude-sonnet-4-5 needs ANTHROPIC_API_KEY`,
			`"id":2,"error":{"code":-32602,"message":"invalid params: methodId: coda offers no method \"oauth\" (it offers \"env\")"`,
			`"id":4,"error":{"code":-32000,"message":"authentication required: model anthropic:claude-sonnet-4-5 needs ANTHROPIC_API_KEY`,
			`"id":5,"error":{"code":-32602,"message":"invalid params: unknown provider \"nosuch\""`,
			`"id":6,"result":{"configOptions":`,
			`"id":7,"result":{"_meta":{"coda":{"command":"model"`,
			`"id":8,"result":{"_meta":{"coda":{"finalOutput":{"runId":"r-2","status":"answered"`,
		} {
			if received(c, want) == "" {
				lines, _ := c.lines()
				t.Errorf("coda never sent %s; it sent:\n%s", want, strings.Join(lines, "\n"))
			}
		}
		// The refused prompt ran nothing and named nothing.
		if l := received(c, `"title":"hi"`); l != "" {
			t.Errorf("a refused prompt titled the session: %s", l)
		}
		// The model picked after the refusal is the one shown.
		if l := received(c, `"id":6,`); !strings.Contains(l, `"currentValue":"anthropic:claude-opus-4-1"`) {
			t.Errorf("set_config_option model: %s", l)
		}
	})
}

// With a key, authenticate succeeds; the default model coda looks for is
// waited for by the turn, not by initialize, and used.
func TestAuth_withKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		found := make(chan struct{})
		var gotDefault string
		opts := acp.Options{Models: &acptest.Models{
			DefaultFunc: func(wait bool) string {
				if !wait {
					select {
					case <-found:
						return "script:found"
					default:
						return ""
					}
				}
				<-found
				return "script:found"
			},
			ReachFunc: func(userModel, defaultModel string) error {
				gotDefault = defaultModel
				if defaultModel == "" {
					return errors.New("no model: pass --model")
				}
				return nil
			},
		}}
		c, served := serve(t, context.Background(), authServer(t, opts), t.TempDir(), nil)
		c.do(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)
		c.do(`await "id":0`)
		if l := received(c, `"id":0,`); !strings.Contains(l, "no model: pass --model") {
			t.Errorf("initialize, before the default is found: %s", l)
		}
		close(found)
		c.do(`{"jsonrpc":"2.0","id":1,"method":"authenticate","params":{"methodId":"env"}}`)
		c.do(`await "id":1`)
		c.do(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}`)
		c.do(`await "id":2`)
		c.do(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s-1","prompt":[{"type":"text","text":"hi"}]}}`)
		c.do(`await "id":3`)
		c.closeInput()
		<-served
		c.wait()
		if l := received(c, `"id":1,`); l != `{"jsonrpc":"2.0","id":1,"result":{}}` {
			t.Errorf("authenticate: %s", l)
		}
		if l := received(c, `"id":2,`); !strings.Contains(l, `"currentValue":"script:found"`) {
			t.Errorf("session/new's model option does not show the default found: %s", l)
		}
		if l := received(c, `"id":3,`); !strings.Contains(l, `"status":"answered"`) || gotDefault != "script:found" {
			t.Errorf("prompt: %s (default %q)", l, gotDefault)
		}
	})
}
