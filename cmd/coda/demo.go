package main

import (
	"bufio"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/coda-acp/coda/acp"
	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/blueprint"
	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/provider/script"
)

//go:embed demo/blueprint.toml
var demoBlueprint []byte

//go:embed demo/model.toml
var demoScript []byte

// oneModel serves the same model for every spec.
type oneModel struct{ m llm.Model }

func (o oneModel) Model(string) (llm.Model, error) { return o.m, nil }

// demo runs a scripted ACP session end to end: a client speaks JSON-RPC over
// pipes to a coda server, and the session is printed as a transcript.
func demo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var wire bool
	fs := newFlagSet("demo")
	fs.BoolVar(&wire, "wire", false, "also print every JSON-RPC line")
	if _, err := parseArgs(fs, args); err != nil {
		return err
	}
	agent, err := blueprint.Parse(demoBlueprint, "demo blueprint")
	if err != nil {
		return err
	}
	sc, err := script.Parse(demoScript, "demo model")
	if err != nil {
		return err
	}
	srv, err := acp.NewServer(acp.Options{
		Agent: agent, UserModel: "script:demo", Version: version,
		Engine: &engine.Engine{
			Models: oneModel{script.New("script:demo", sc)},
			Log:    slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelError})),
		},
	})
	if err != nil {
		return err
	}
	toServer, clientOut := io.Pipe()
	clientIn, fromServer := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := srv.Serve(ctx, toServer, fromServer)
		fromServer.Close()
		done <- err
	}()
	c := &demoClient{w: clientOut, r: bufio.NewReader(clientIn), out: stdout, wire: wire}
	err = c.session()
	clientOut.Close()
	if serr := <-done; err == nil {
		err = serr
	}
	return err
}

// demoClient is a small ACP client that prints what it sees.
type demoClient struct {
	// streamed is the text of the message streaming now (streamedID), of
	// the kind streamedKind, printed when it ends.
	streamed     strings.Builder
	streamedID   string
	streamedKind string
	w            io.Writer
	r            *bufio.Reader
	out          io.Writer
	wire         bool
	next         int
}

type wireMsg struct {
	ID     *int            `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// call sends a request and handles notifications until its response.
func (c *demoClient) call(method string, params any) (json.RawMessage, error) {
	id := c.next
	c.next++
	line, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if c.wire {
		fmt.Fprintf(c.out, "   → %s\n", line)
	}
	if _, err := fmt.Fprintf(c.w, "%s\n", line); err != nil {
		return nil, err
	}
	for {
		raw, err := c.r.ReadBytes('\n')
		if err != nil {
			return nil, fmt.Errorf("reading from coda: %w", err)
		}
		if c.wire {
			fmt.Fprintf(c.out, "   ← %s", raw)
		}
		var m wireMsg
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, fmt.Errorf("coda sent a line that is not JSON: %s", raw)
		}
		if m.Method == "session/update" {
			c.update(m.Params)
			continue
		}
		if m.ID != nil && *m.ID == id {
			if m.Error != nil {
				return nil, fmt.Errorf("%s failed: %s (%d)", method, m.Error.Message, m.Error.Code)
			}
			return m.Result, nil
		}
	}
}

func (c *demoClient) session() error {
	fmt.Fprintln(c.out, "coda demo: an ACP client talks to coda over pipes; the model is a script (no key, no network).")
	fmt.Fprintln(c.out)
	res, err := c.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	if err != nil {
		return err
	}
	var init struct {
		AgentInfo         struct{ Name, Version string }
		AgentCapabilities struct {
			Meta struct {
				Coda struct {
					Formats []string       `json:"formats"`
					Output  map[string]any `json:"output"`
				} `json:"coda"`
			} `json:"_meta"`
		}
	}
	json.Unmarshal(res, &init)
	fmt.Fprintf(c.out, "initialize    → %s %s; checks answers in %s\n", init.AgentInfo.Name, init.AgentInfo.Version, strings.Join(init.AgentCapabilities.Meta.Coda.Formats, ", "))
	cwd, _ := os.Getwd()
	res, err = c.call("session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}})
	if err != nil {
		return err
	}
	var sess struct {
		SessionID     string `json:"sessionId"`
		ConfigOptions []struct {
			ID, CurrentValue string
		} `json:"configOptions"`
	}
	json.Unmarshal(res, &sess)
	format := ""
	for _, o := range sess.ConfigOptions {
		if o.ID == "output_format" {
			format = o.CurrentValue
		}
	}
	fmt.Fprintf(c.out, "session/new   → session %s; answer format: %s\n", sess.SessionID, format)
	prompt := "Is the auth module safe?"
	fmt.Fprintf(c.out, "session/prompt: %q\n\n", prompt)
	res, err = c.call("session/prompt", map[string]any{"sessionId": sess.SessionID, "prompt": []any{map[string]any{"type": "text", "text": prompt}}})
	if err != nil {
		return err
	}
	var pr struct {
		StopReason string `json:"stopReason"`
		Meta       struct {
			Coda struct {
				RunID  string `json:"runId"`
				Status string `json:"status"`
			} `json:"coda"`
		} `json:"_meta"`
	}
	json.Unmarshal(res, &pr)
	fmt.Fprintf(c.out, "\nprompt answered: stopReason %s, run %s %s\n", pr.StopReason, pr.Meta.Coda.RunID, pr.Meta.Coda.Status)
	return nil
}

// flushStreamed prints the streamed message gathered so far: the model's
// work, which coda streams as thoughts (agent_thought_chunk) so that the
// answer is the turn's only message.
func (c *demoClient) flushStreamed() {
	if c.streamed.Len() > 0 {
		label := "work (thought)"
		if c.streamedKind == "agent_message_chunk" {
			label = "commentary (message)"
		}
		fmt.Fprintf(c.out, "  %s: %s\n", label, c.streamed.String())
		c.streamed.Reset()
	}
	c.streamedID = ""
}

// stream gathers a streamed chunk of message id.
func (c *demoClient) stream(kind, id, text string) {
	c.streamedID, c.streamedKind = id, kind
	c.streamed.WriteString(text)
}

// update prints one session/update.
func (c *demoClient) update(params json.RawMessage) {
	var p struct {
		Update struct {
			SessionUpdate string `json:"sessionUpdate"`
			MessageID     string `json:"messageId"`
			Content       json.RawMessage
			Title         string
			Status        string
			RawInput      json.RawMessage `json:"rawInput"`
			Entries       []struct{ Content, Status string }
			Meta          struct {
				Coda json.RawMessage `json:"coda"`
			} `json:"_meta"`
		} `json:"update"`
	}
	json.Unmarshal(params, &p)
	u := p.Update
	streaming := (u.SessionUpdate == "agent_message_chunk" || u.SessionUpdate == "agent_thought_chunk") &&
		strings.Contains(string(u.Meta.Coda), `"commentary"`)
	if !streaming || u.MessageID != c.streamedID {
		c.flushStreamed()
	}
	text := func() string {
		var t struct{ Text string }
		json.Unmarshal(u.Content, &t)
		return t.Text
	}
	switch u.SessionUpdate {
	case "plan":
		var parts []string
		for _, e := range u.Entries {
			parts = append(parts, e.Content+": "+e.Status)
		}
		fmt.Fprintf(c.out, "  [plan] %s\n", strings.Join(parts, ", "))
	case "agent_message_chunk":
		var meta struct{ Phase string }
		json.Unmarshal(u.Meta.Coda, &meta)
		if meta.Phase == "final_answer" {
			fmt.Fprintf(c.out, "\n  ══ the closing answer (the turn's only message) ══\n  %s\n  _meta.coda: %s\n", text(), u.Meta.Coda)
			return
		}
		c.stream(u.SessionUpdate, u.MessageID, text())
	case "agent_thought_chunk":
		c.stream(u.SessionUpdate, u.MessageID, text())
	case "tool_call":
		var in struct{ Content string }
		json.Unmarshal(u.RawInput, &in)
		fmt.Fprintf(c.out, "  tool call: %s\n", u.Title)
		if in.Content != "" {
			fmt.Fprintf(c.out, "    submitted: %s\n", strings.ReplaceAll(in.Content, "\n", "\n               "))
		}
	case "tool_call_update":
		var contents []struct{ Content struct{ Text string } }
		json.Unmarshal(u.Content, &contents)
		switch u.Status {
		case "failed":
			for _, x := range contents {
				fmt.Fprintf(c.out, "    ✗ refused; the model is told: %s\n", x.Content.Text)
			}
		case "completed":
			fmt.Fprintln(c.out, "    ✓ accepted")
		}
	}
}
