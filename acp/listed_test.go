package acp_test

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/coda-acp/coda/acp"
	"github.com/coda-acp/coda/acp/acptest"
	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/blueprint"
	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/store"
)

// The providers' models (DESIGN §16) are asked once, in the background,
// when the first session starts: session/new waits for them a second at
// most (TestListedModels_newWaitsBriefly). A
// session answered before they came is sent config_option_update with them
// once, after its answer and its commands; a session opened after has them
// in its answer and is sent nothing more; a session closed before they came
// is sent nothing after its close. Serve's end stops an ask still running.
func TestListedModels(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		asked := 0
		opts := acp.Options{Models: &acptest.Models{DiscoverFunc: func(ctx context.Context) []acp.ListedModel {
			asked++
			select {
			case <-release:
			case <-ctx.Done():
			}
			return []acp.ListedModel{{Spec: "lab:qwen3", Name: "lab:qwen3"}, {Spec: "lab:tiny", Name: "lab:tiny (no tools)"}}
		}}, UserModel: "script:ok"}
		c, served := serve(t, context.Background(), authServer(t, opts), t.TempDir(), nil)
		for _, line := range []string{
			`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`,
			`await "id":0`,
			`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}`,
			`await "available_commands_update"`,
			`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}`,
			`await "id":2`,
			`{"jsonrpc":"2.0","id":3,"method":"session/close","params":{"sessionId":"s-2"}}`,
			`await "id":3`,
		} {
			c.do(line)
		}
		synctest.Wait()
		close(release)
		synctest.Wait()
		for _, line := range []string{
			`await "config_option_update"`,
			`{"jsonrpc":"2.0","id":4,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}`,
			`await "id":4`,
			`{"jsonrpc":"2.0","id":5,"method":"session/set_config_option","params":{"sessionId":"s-1","configId":"model","value":"lab:qwen3"}}`,
			`await "id":5`,
		} {
			c.do(line)
		}
		c.closeInput()
		if err := <-served; err != nil {
			t.Fatal(err)
		}
		c.wait()
		lines, _ := c.lines()
		if asked != 1 {
			t.Errorf("Discover was asked %d times, want once", asked)
		}
		var updates []string
		for i, l := range lines {
			switch {
			case strings.Contains(l, `"id":1,"result"`) || strings.Contains(l, `"id":2,"result"`):
				if strings.Contains(l, "lab:qwen3") {
					t.Errorf("a session answered before the list came has it: %s", l)
				}
			case strings.Contains(l, `"id":4,"result"`):
				if !strings.Contains(l, `{"value":"lab:qwen3","name":"lab:qwen3"},{"value":"lab:tiny","name":"lab:tiny (no tools)"}`) {
					t.Errorf("a session opened after the list came lacks it: %s", l)
				}
			case strings.Contains(l, `"id":5,"result"`):
				if !strings.Contains(l, `"currentValue":"lab:qwen3"`) {
					t.Errorf("set model to a listed one: %s", l)
				}
			case strings.Contains(l, "config_option_update"):
				updates = append(updates, l)
				if !strings.Contains(l, `"sessionId":"s-1"`) || !strings.Contains(l, `"lab:tiny (no tools)"`) {
					t.Errorf("config_option_update: %s", l)
				}
				if !strings.Contains(strings.Join(lines[:i], "\n"), `"id":3,"result"`) {
					t.Errorf("the update came before the list did: %s", l)
				}
			}
		}
		if len(updates) != 1 {
			t.Errorf("%d config_option_updates, want one (for s-1 alone):\n%s", len(updates), strings.Join(updates, "\n"))
		}
	})
}

// A list the providers give within a second is in the first session/new's
// answer, so a headless client that picks a listed model right after it
// (acpx --model X exec) finds it offered, with no config_option_update to
// wait for.
func TestListedModels_newWaitsBriefly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		opts := acp.Options{Models: &acptest.Models{DiscoverFunc: func(ctx context.Context) []acp.ListedModel {
			<-release // the providers answer once session/new waits for them
			return []acp.ListedModel{{Spec: "lab:qwen3", Name: "lab:qwen3"}}
		}}, UserModel: "script:ok"}
		c, served := serve(t, context.Background(), authServer(t, opts), t.TempDir(), nil)
		c.do(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)
		c.do(`await "id":0`)
		c.do(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}`)
		synctest.Wait() // session/new is read, and waits for the list (or has answered without it)
		close(release)
		for _, line := range []string{
			`await "id":1`,
			`{"jsonrpc":"2.0","id":2,"method":"session/set_config_option","params":{"sessionId":"s-1","configId":"model","value":"lab:qwen3"}}`,
			`await "id":2`,
		} {
			c.do(line)
		}
		c.closeInput()
		if err := <-served; err != nil {
			t.Fatal(err)
		}
		c.wait()
		lines, _ := c.lines()
		all := strings.Join(lines, "\n")
		for _, l := range lines {
			if strings.Contains(l, `"id":1,"result"`) && !strings.Contains(l, `{"value":"lab:qwen3","name":"lab:qwen3"}`) {
				t.Errorf("session/new's answer lacks the list that came while it waited: %s", l)
			}
			if strings.Contains(l, `"id":2,`) && !strings.Contains(l, `"currentValue":"lab:qwen3"`) {
				t.Errorf("set model to the listed one: %s", l)
			}
		}
		if strings.Contains(all, "config_option_update") {
			t.Errorf("a config_option_update followed an answer that had the list:\n%s", all)
		}
	})
}

// An ask still running when stdin ends is stopped: Serve returns.
func TestListedModels_stoppedWithServe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		stopped := false
		opts := acp.Options{Models: &acptest.Models{DiscoverFunc: func(ctx context.Context) []acp.ListedModel {
			<-ctx.Done()
			stopped = true
			return nil
		}}}
		c, served := serve(t, context.Background(), authServer(t, opts), t.TempDir(), nil)
		c.do(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}`)
		c.do(`await "id":1`)
		c.closeInput()
		if err := <-served; err != nil {
			t.Fatal(err)
		}
		c.wait()
		if !stopped {
			t.Error("Serve returned with the ask still running")
		}
	})
}

// The list that comes while a prompt's turn runs waits for the prompt's
// answer: nothing comes between a turn's final answer and its response.
func TestListedModels_duringTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		listRelease, modelRelease := make(chan struct{}), make(chan struct{})
		agent, err := blueprint.Parse([]byte(defaultBlueprint), "test")
		if err != nil {
			t.Fatal(err)
		}
		srv, err := acp.NewServer(acp.Options{
			Agent: agent, UserModel: "script:ok",
			Engine: &engine.Engine{Models: oneModel{heldModel{modelRelease}}, IDs: counter(), Store: store.New(t.TempDir())},
			Models: &acptest.Models{DiscoverFunc: func(context.Context) []acp.ListedModel {
				<-listRelease
				return []acp.ListedModel{{Spec: "lab:qwen3", Name: "lab:qwen3"}}
			}},
		})
		if err != nil {
			t.Fatal(err)
		}
		c, served := serve(t, context.Background(), srv, t.TempDir(), nil)
		c.do(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}`)
		c.do(`await "available_commands_update"`)
		c.do(`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s-1","prompt":[{"type":"text","text":"hi"}]}}`)
		synctest.Wait() // the model holds the turn
		close(listRelease)
		synctest.Wait() // the list is in, and waits
		close(modelRelease)
		c.do(`await "config_option_update"`)
		c.closeInput()
		if err := <-served; err != nil {
			t.Fatal(err)
		}
		c.wait()
		lines, _ := c.lines()
		response, update := -1, -1
		for i, l := range lines {
			switch {
			case strings.Contains(l, `"id":2,"result"`):
				response = i
			case strings.Contains(l, "config_option_update"):
				update = i
			}
		}
		if response < 0 || update != response+1 {
			t.Errorf("the prompt's response is line %d, the update line %d; want the update right after:\n%s", response, update, strings.Join(lines, "\n"))
		}
	})
}

// heldModel submits an answer once release is closed.
type heldModel struct{ release chan struct{} }

func (heldModel) Name() string { return "held" }
func (m heldModel) Stream(ctx context.Context, _ *llm.Request, _ func(llm.Delta) error) (*llm.Response, error) {
	select {
	case <-m.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return &llm.Response{ToolCalls: []llm.ToolCall{{ID: "c", Name: "submit_output", Arguments: []byte(`{"content":"ok"}`)}}}, nil
}

// session/load and session/resume wait for the providers' list before they
// answer (a client that restores a session after a restart and at once
// picks a listed model finds it offered), while session/new never does:
// with the list held, a new session is answered and the load and resume
// are not; once it comes, each answer offers the listed model, and nothing
// for those sessions follows their answers (ACP-LOAD-002).
func TestListedModels_loadWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		state, work := t.TempDir(), t.TempDir()
		st := store.New(state)
		for _, id := range []string{"s-old", "s-older"} {
			ss := store.SessionState{ID: id, Cwd: work}
			f, err := st.CreateSession(ss)
			if err != nil {
				t.Fatal(err)
			}
			ex := &store.Exchange{Prompt: []store.PromptBlock{{Type: "text", Text: "hi"}}, History: store.Said{Prompt: "hi", Answer: "ok"}}
			if err := f.Append(ss, ex); err != nil {
				t.Fatal(err)
			}
		}
		release := make(chan struct{})
		srv, err := acp.NewServer(acp.Options{
			Agent: testAgent(t), UserModel: "script:ok",
			Engine: &engine.Engine{Models: oneModel{heldModel{}}, IDs: counter(), Store: st},
			Models: &acptest.Models{DiscoverFunc: func(ctx context.Context) []acp.ListedModel {
				select {
				case <-release:
				case <-ctx.Done():
				}
				return []acp.ListedModel{{Spec: "lab:listed-one", Name: "lab:listed-one"}}
			}},
		})
		if err != nil {
			t.Fatal(err)
		}
		c, served := serve(t, context.Background(), srv, work, nil)
		c.do(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)
		c.do(`await "id":0`)
		c.do(`{"jsonrpc":"2.0","id":1,"method":"session/load","params":{"sessionId":"s-old","cwd":"` + work + `","mcpServers":[]}}`)
		c.do(`{"jsonrpc":"2.0","id":2,"method":"session/resume","params":{"sessionId":"s-older","cwd":"` + work + `","mcpServers":[]}}`)
		c.do(`{"jsonrpc":"2.0","id":3,"method":"session/new","params":{"cwd":"` + work + `","mcpServers":[]}}`)
		c.do(`await "id":3`)
		synctest.Wait() // the load and the resume wait for the list
		for _, id := range []string{`"id":1,`, `"id":2,`} {
			if l := received(c, id); l != "" {
				t.Errorf("answered before the list came: %s", l)
			}
		}
		close(release)
		synctest.Wait() // every answer is out: stdin's end would not wait for the list
		c.closeInput()
		if err := <-served; err != nil {
			t.Fatal(err)
		}
		c.wait()
		lines, _ := c.lines()
		for _, s := range []struct{ id, session string }{{`"id":1,`, "s-old"}, {`"id":2,`, "s-older"}} {
			answer := -1
			for i, l := range lines {
				switch {
				case strings.Contains(l, s.id):
					answer = i
					if !strings.Contains(l, `{"value":"lab:listed-one","name":"lab:listed-one"}`) {
						t.Errorf("%s's answer lacks the listed model: %s", s.session, l)
					}
				case answer >= 0 && strings.Contains(l, `"sessionId":"`+s.session+`"`):
					t.Errorf("sent for %s after its answer: %s", s.session, l)
				}
			}
			if answer < 0 {
				t.Errorf("%s was never answered", s.session)
			}
		}
		if l := received(c, `"id":3,`); strings.Contains(l, "lab:listed-one") {
			t.Errorf("session/new waited for the list: %s", l)
		}
		if l := received(c, `"config_option_update"`); !strings.Contains(l, `"sessionId":"s-1"`) {
			t.Errorf("the new session is not sent the list when it comes: %s", l)
		}
	})
}

// A Discover that does not bound itself holds a load no longer than
// maxListWait: the load is answered without the list.
func TestListedModels_loadWaitsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		state, work := t.TempDir(), t.TempDir()
		st := store.New(state)
		if _, err := st.CreateSession(store.SessionState{ID: "s-old", Cwd: work}); err != nil {
			t.Fatal(err)
		}
		srv, err := acp.NewServer(acp.Options{
			Agent: testAgent(t), UserModel: "script:ok",
			Engine: &engine.Engine{Models: oneModel{heldModel{}}, IDs: counter(), Store: st},
			Models: &acptest.Models{DiscoverFunc: func(ctx context.Context) []acp.ListedModel {
				<-ctx.Done()
				return nil
			}},
		})
		if err != nil {
			t.Fatal(err)
		}
		c, served := serve(t, context.Background(), srv, work, nil)
		start := time.Now()
		c.do(`{"jsonrpc":"2.0","id":1,"method":"session/load","params":{"sessionId":"s-old","cwd":"` + work + `","mcpServers":[]}}`)
		c.do(`await "id":1`)
		if waited := time.Since(start); waited < 5*time.Second || waited > 10*time.Second {
			t.Errorf("the load waited %s for a list that never came, want about 6s", waited)
		}
		c.closeInput()
		if err := <-served; err != nil {
			t.Fatal(err)
		}
		c.wait()
		if l := received(c, `"id":1,`); !strings.Contains(l, `"result"`) {
			t.Errorf("the load: %s", l)
		}
	})
}
