package acp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/coda-acp/coda/acp"
	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/blueprint"
	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/tools"
	"github.com/coda-acp/coda/store"
)

// lifeModel plays a model by what its prompt asks: "stream" streams a
// chunk a second until cancelled; "permission" first asks to write a file
// (the editor is never going to answer), then answers; "quick" answers
// after a second. It runs on the synctest bubble's clock.
type lifeModel struct{}

func (lifeModel) Name() string { return "life" }

func (lifeModel) Stream(ctx context.Context, req *llm.Request, onDelta func(llm.Delta) error) (*llm.Response, error) {
	prompt := req.Messages[0].Text
	pause := func() error {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
			return nil
		}
	}
	switch {
	case strings.Contains(prompt, "stream"):
		for {
			if err := onDelta(llm.Delta{Text: "more "}); err != nil {
				return nil, err
			}
			if err := pause(); err != nil {
				return nil, err
			}
		}
	case strings.Contains(prompt, "permission") && len(req.Messages) == 1:
		return &llm.Response{StopReason: llm.StopToolUse, ToolCalls: []llm.ToolCall{
			{ID: "w", Name: "write_file", Arguments: json.RawMessage(`{"path":"a.txt","content":"x"}`)},
		}}, nil
	case strings.Contains(prompt, "quick"):
		if err := pause(); err != nil {
			return nil, err
		}
	}
	return &llm.Response{StopReason: llm.StopToolUse, ToolCalls: []llm.ToolCall{
		{ID: "s", Name: "submit_output", Arguments: json.RawMessage(`{"content":"Done."}`)},
	}}, nil
}

// testEngine is opts' engine, made when the test gave none: a test sets
// the fields it is about, its helper the rest.
func testEngine(opts *acp.Options) *engine.Engine {
	if opts.Engine == nil {
		opts.Engine = &engine.Engine{}
	}
	return opts.Engine
}

// newLifeServer is a server for lifecycle tests: the default blueprint, the
// given model, run records in state.
func newLifeServer(t *testing.T, state string, model llm.Model, opts acp.Options) *acp.Server {
	t.Helper()
	agent, err := blueprint.Parse([]byte(defaultBlueprint), "test")
	if err != nil {
		t.Fatal(err)
	}
	opts.Agent, opts.UserModel = agent, "life"
	e := testEngine(&opts)
	e.Models, e.Tools, e.Store, e.IDs = oneModel{model}, tools.Builtin(), store.New(state), counter()
	srv, err := acp.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// startPrompts opens one session per kind and sends each its prompt: the
// prompt with request id i is kinds[i]. It returns when every turn is at
// its waiting point (streaming, asking permission, or thinking).
func startPrompts(t *testing.T, c *client, work string, kinds []string) {
	t.Helper()
	c.do(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)
	c.await(`"id":"init"`)
	for i, kind := range kinds {
		c.do(fmt.Sprintf(`{"jsonrpc":"2.0","id":"new-%d","method":"session/new","params":{"cwd":%q,"mcpServers":[]}}`, i, work))
		c.await(fmt.Sprintf(`"id":"new-%d"`, i))
		c.do(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{"sessionId":"s-%d","prompt":[{"type":"text","text":"%s, please"}]}}`, i, i+1, kind))
	}
	synctest.Wait()
}

// answers collects the response to each prompt (request ids 0..n-1), with
// when it came; a prompt answered twice fails the test.
func answers(t *testing.T, c *client, n int) (stops []string, at []time.Time) {
	t.Helper()
	stops, at = make([]string, n), make([]time.Time, n)
	lines, times := c.lines()
	for i, line := range lines {
		var m struct {
			ID     *int `json:"id"`
			Result *struct {
				StopReason string `json:"stopReason"`
			} `json:"result"`
			Error  *struct{ Message string } `json:"error"`
			Method string                    `json:"method"`
		}
		if json.Unmarshal([]byte(line), &m) != nil || m.ID == nil || m.Method != "" || *m.ID < 0 || *m.ID >= n {
			continue
		}
		if stops[*m.ID] != "" {
			t.Errorf("prompt %d answered twice: %s", *m.ID, line)
		}
		switch {
		case m.Result != nil:
			stops[*m.ID] = m.Result.StopReason
		case m.Error != nil:
			stops[*m.ID] = "error: " + m.Error.Message
		}
		at[*m.ID] = times[i]
	}
	return stops, at
}

// checkRecords checks that state holds n run records, none left "running".
func checkRecords(t *testing.T, state string, n int) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(state, "runs", "*", "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != n {
		t.Errorf("%d run records, want %d", len(files), n)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var rr store.RunRecord
		if err := json.Unmarshal(data, &rr); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if rr.Status == "running" || rr.Status == "" {
			t.Errorf("%s: status %q: the run record was never finished", f, rr.Status)
		}
	}
}

// At stdin's end, with turns in flight in many sessions: a permission
// request waiting for the editor fails at once (no answer can come), so its
// turn goes on and answers; a turn that finishes within the drain period
// answers; a turn still streaming when it ends is cancelled and answered
// "cancelled". Every prompt gets exactly one answer, every run record is
// finished, and Serve returns cleanly.
func TestServe_eofAnswersEveryPrompt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		state, work := t.TempDir(), t.TempDir()
		srv := newLifeServer(t, state, lifeModel{}, acp.Options{})
		c, served := serve(t, context.Background(), srv, work, map[string][]string{"session/request_permission": {noAnswer}})
		var kinds []string
		for range 5 {
			kinds = append(kinds, "stream", "permission", "quick")
		}
		startPrompts(t, c, work, kinds)
		lines, _ := c.lines()
		if n := strings.Count(strings.Join(lines, "\n"), `"method":"session/request_permission"`); n != 5 {
			t.Fatalf("%d permission requests open before stdin closed, want 5", n)
		}

		eof := time.Now()
		c.closeInput()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
		c.wait()

		stops, at := answers(t, c, len(kinds))
		for i, kind := range kinds {
			want, after := map[string]string{"stream": "cancelled", "permission": "end_turn", "quick": "end_turn"}[kind],
				map[string]time.Duration{"stream": 30 * time.Second, "permission": 0, "quick": time.Second}[kind]
			if stops[i] != want {
				t.Errorf("prompt %d (%s): answered %q, want %q", i, kind, stops[i], want)
				continue
			}
			if got := at[i].Sub(eof); got != after {
				t.Errorf("prompt %d (%s): answered %s after stdin closed, want %s", i, kind, got, after)
			}
		}
		checkRecords(t, state, len(kinds))
	})
}

// When ctx ends (coda was signalled) with turns in flight and stdin still
// open, every turn is cancelled at once and answered "cancelled", every run
// record is finished, the output is flushed, and Serve returns without
// waiting for stdin; prompts read after that are not run.
func TestServe_ctxEndAnswersEveryPrompt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		state, work := t.TempDir(), t.TempDir()
		srv := newLifeServer(t, state, lifeModel{}, acp.Options{})
		ctx, cancel := context.WithCancel(context.Background())
		c, served := serve(t, ctx, srv, work, map[string][]string{"session/request_permission": {noAnswer}})
		var kinds []string
		for range 4 {
			kinds = append(kinds, "stream", "permission", "quick")
		}
		startPrompts(t, c, work, kinds)

		signalled := time.Now()
		cancel()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
		if d := time.Since(signalled); d != 0 {
			t.Errorf("Serve took %s after the signal, want no wait", d)
		}
		c.wait() // stdout is closed: everything was flushed
		stops, _ := answers(t, c, len(kinds))
		for i, stop := range stops {
			if stop != "cancelled" {
				t.Errorf("prompt %d (%s): answered %q, want cancelled", i, kinds[i], stop)
			}
		}
		checkRecords(t, state, len(kinds))
		c.closeInput() // ends the read loop left reading stdin
	})
}

// session/close while a turn waits on the editor: the turn's "cancelled"
// answer comes first, then the close's, and nothing after it names the
// session.
func TestServe_closeDuringPermission(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		state, work := t.TempDir(), t.TempDir()
		srv := newLifeServer(t, state, lifeModel{}, acp.Options{})
		c, served := serve(t, context.Background(), srv, work, map[string][]string{"session/request_permission": {noAnswer}})
		startPrompts(t, c, work, []string{"permission", "stream"})
		c.do(`{"jsonrpc":"2.0","id":"close","method":"session/close","params":{"sessionId":"s-1"}}`)
		c.await(`"id":"close"`)
		c.do(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s-2"}}`)
		c.await(`"id":1`)
		c.closeInput()
		<-served
		c.wait()
		lines, _ := c.lines()
		var order []string
		closed := false
		for _, line := range lines {
			switch {
			case strings.HasPrefix(line, `{"jsonrpc":"2.0","id":0,`):
				order = append(order, "prompt")
			case strings.HasPrefix(line, `{"jsonrpc":"2.0","id":"close",`):
				order = append(order, "close")
				closed = true
			case closed && strings.Contains(line, `"sessionId":"s-1"`):
				t.Errorf("sent for the closed session after the close's answer: %s", line)
			}
		}
		if diff := cmp.Diff([]string{"prompt", "close"}, order); diff != "" {
			t.Errorf("answer order (-want +got):\n%s", diff)
		}
		if stops, _ := answers(t, c, 1); stops[0] != "cancelled" {
			t.Errorf("the closed session's prompt answered %q, want cancelled", stops[0])
		}
	})
}

// --trace logs each message read and written as one record holding the
// whole message, however the bytes arrive.
func TestServe_traceWholeMessages(t *testing.T) {
	var logs bytes.Buffer
	var mu sync.Mutex
	log := slog.New(slog.NewJSONHandler(lockedWriter{&logs, &mu}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	srv := newLifeServer(t, t.TempDir(), lifeModel{}, acp.Options{Trace: true, Engine: &engine.Engine{Log: log}})
	in := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`,
		`not json`,
		`{"jsonrpc":"2.0","id":2,"method":"coda/nope","params":{}}`,
	}
	var out bytes.Buffer
	// One byte at a time: the reads are no guide to where messages end.
	if err := srv.Serve(context.Background(), oneByteReader{strings.NewReader(strings.Join(in, "\n") + "\n")}, &out); err != nil {
		t.Fatal(err)
	}
	var read, written []string
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var rec struct{ Msg, Message string }
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		switch rec.Msg {
		case "wire ←":
			read = append(read, rec.Message)
		case "wire →":
			written = append(written, rec.Message)
		}
	}
	if diff := cmp.Diff(in, read); diff != "" {
		t.Errorf("messages read, as traced (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(strings.Split(strings.TrimSpace(out.String()), "\n"), written); diff != "" {
		t.Errorf("messages written, as traced (-want +got):\n%s", diff)
	}
}

type oneByteReader struct{ r *strings.Reader }

func (o oneByteReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	return o.r.Read(p[:1])
}

// A line over Options.MaxMessageBytes is answered with its request's id
// and coda goes on serving.
func TestServe_maxMessageBytes(t *testing.T) {
	srv := newLifeServer(t, t.TempDir(), lifeModel{}, acp.Options{MaxMessageBytes: 1 << 10})
	long := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"pad":"` + strings.Repeat("x", 2<<10) + `"}}`
	next := `{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":1}}`
	var out bytes.Buffer
	if err := srv.Serve(context.Background(), strings.NewReader(long+"\n"+next+"\n"), &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,`) ||
		!strings.HasPrefix(lines[1], `{"jsonrpc":"2.0","id":2,"result":`) {
		t.Errorf("answers:\n%s", out.String())
	}
}
