package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// A whole ACP turn against an OpenAI-compatible server: coda is launched
// with --config naming [providers.test] and --model test:some-model; the
// model streams commentary, then calls submit_output; the client sees the
// commentary, the closing final_answer chunk and the prompt's answer.
func TestProvider_e2e(t *testing.T) {
	const answer = "The answer is **42**.\n\nIt is the only value that fits."
	submit, _ := json.Marshal(map[string]string{"content": answer})
	replies := []string{
		// The first call: commentary in two deltas, then submit_output in
		// fragments.
		e2eChunk(`{"role":"assistant","content":""}`, "") +
			e2eChunk(`{"content":"Working it"}`, "") +
			e2eChunk(`{"content":" out."}`, "") +
			e2eChunk(fmt.Sprintf(`{"tool_calls":[{"index":0,"id":"call_e2e1","type":"function","function":{"name":"submit_output","arguments":%q}}]}`, string(submit[:10])), "") +
			e2eChunk(fmt.Sprintf(`{"tool_calls":[{"index":0,"function":{"arguments":%q}}]}`, string(submit[10:])), "") +
			e2eChunk(`{}`, "tool_calls") +
			"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":900,\"completion_tokens\":40}}\n\ndata: [DONE]\n\n",
		// Any later call: the model is done.
		e2eChunk(`{"content":"Submitted."}`, "stop") + "data: [DONE]\n\n",
	}
	var mu sync.Mutex
	var bodies []map[string]any
	var auth []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/v1/models" {
			// The picker's live list (discover.go): none to add.
			io.WriteString(w, `{"object":"list","data":[]}`)
			return
		}
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		mu.Lock()
		n := len(bodies)
		bodies = append(bodies, body)
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, replies[min(n, len(replies)-1)])
	}))
	defer srv.Close()

	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.toml")
	os.WriteFile(cfg, []byte(fmt.Sprintf("[providers.test]\nkind = \"openai\"\nbase_url = %q\napi_key_env = \"CODA_E2E_KEY\"\n", srv.URL+"/v1")), 0o600)
	t.Setenv("CODA_E2E_KEY", "e2e-secret")
	work := filepath.Join(dir, "work")
	os.Mkdir(work, 0o700)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang detector
	defer cancel()
	stdinR, stdinW := io.Pipe()
	stdoutR, stdoutW := io.Pipe()
	var stderr strings.Builder
	done := make(chan error, 1)
	go func() {
		err := run(ctx, []string{"--config", cfg, "--model", "test:some-model", "--state-dir", filepath.Join(dir, "state")}, stdinR, stdoutW, &stderr)
		stdoutW.Close()
		done <- err
	}()
	lines := make(chan map[string]any)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdoutR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var msg map[string]any
			if err := json.Unmarshal(sc.Bytes(), &msg); err != nil {
				t.Errorf("stdout line is not JSON: %s", sc.Bytes())
				continue
			}
			lines <- msg
		}
	}()
	send := func(s string) {
		if _, err := io.WriteString(stdinW, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	// await reads lines until the response to id, returning everything seen.
	await := func(id float64) (resp map[string]any, seen []map[string]any) {
		for {
			select {
			case msg, ok := <-lines:
				if !ok {
					t.Fatalf("stdout ended before the response to %v; stderr:\n%s", id, stderr.String())
				}
				seen = append(seen, msg)
				if msg["id"] == id && msg["method"] == nil {
					return msg, seen
				}
				if msg["method"] != nil && msg["id"] != nil {
					t.Fatalf("unexpected request from coda: %v", msg)
				}
			case <-ctx.Done():
				t.Fatalf("no response to %v; stderr:\n%s", id, stderr.String())
			}
		}
	}

	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)
	if resp, _ := await(0); resp["error"] != nil {
		t.Fatalf("initialize: %v", resp)
	}
	send(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":%q,"mcpServers":[]}}`, work))
	resp, _ := await(1)
	sid, _ := e2eDig(resp, "result", "sessionId").(string)
	if sid == "" {
		t.Fatalf("session/new: %v", resp)
	}
	send(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"What is six times seven?"}]}}`, sid))
	resp, seen := await(2)
	stdinW.Close()
	if err := <-done; err != nil {
		t.Errorf("run: %v; stderr:\n%s", err, stderr.String())
	}

	// The prompt's answer.
	if got := e2eDig(resp, "result", "stopReason"); got != "end_turn" {
		t.Errorf("stopReason %v in %v", got, resp)
	}
	if got := e2eDig(resp, "result", "_meta", "coda", "status"); got != "answered" {
		t.Errorf("status %v in %v", got, resp)
	}
	if got := e2eDig(resp, "result", "_meta", "coda", "finalOutput", "content"); got != answer {
		t.Errorf("finalOutput.content %q", got)
	}

	// The updates: the streamed commentary as thoughts, then the closing
	// final answer, the turn's only message.
	var commentary strings.Builder
	var final []map[string]any
	for _, msg := range seen {
		if msg["method"] != "session/update" {
			continue
		}
		u, _ := e2eDig(msg, "params", "update").(map[string]any)
		switch kind, phase := u["sessionUpdate"], e2eDig(u, "_meta", "coda", "phase"); {
		case kind == "agent_thought_chunk" && phase == "commentary":
			text, _ := e2eDig(u, "content", "text").(string)
			commentary.WriteString(text)
		case kind == "agent_message_chunk" && phase == "final_answer":
			final = append(final, u)
		case kind == "agent_message_chunk":
			t.Errorf("a message chunk that is not the answer: %v", u)
		}
	}
	if !strings.Contains(commentary.String(), "Working it out.") {
		t.Errorf("commentary %q, want the streamed text", commentary.String())
	}
	if len(final) != 1 {
		t.Fatalf("%d final_answer chunks, want 1", len(final))
	}
	if got := e2eDig(final[0], "content", "text"); got != answer {
		t.Errorf("final answer %q, want %q", got, answer)
	}
	if last := seen[len(seen)-2]; e2eDig(last, "params", "update", "_meta", "coda", "phase") != "final_answer" {
		t.Errorf("the message before the prompt response is not the final answer: %v", last)
	}

	// What the model was sent.
	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d model calls", len(bodies))
	if len(bodies) == 0 {
		t.Fatal("the model was never called")
	}
	if auth[0] != "Bearer e2e-secret" {
		t.Errorf("Authorization %q", auth[0])
	}
	first := bodies[0]
	if first["model"] != "some-model" || first["stream"] != true {
		t.Errorf("request %v", first)
	}
	msgs, _ := first["messages"].([]any)
	if len(msgs) < 2 || e2eDig(msgs[0], "role") != "system" || !strings.Contains(fmt.Sprint(e2eDig(msgs[0], "content")), "submit_output") {
		t.Errorf("first message is not the system prompt: %v", msgs)
	}
	if !strings.Contains(fmt.Sprint(msgs[len(msgs)-1]), "What is six times seven?") {
		t.Errorf("the last message is not the prompt: %v", msgs[len(msgs)-1])
	}
	var tools []string
	for _, tl := range first["tools"].([]any) {
		tools = append(tools, fmt.Sprint(e2eDig(tl, "function", "name")))
		if e2eDig(tl, "function", "parameters", "type") != "object" {
			t.Errorf("tool %v has no object schema", tl)
		}
	}
	if !strings.Contains(strings.Join(tools, ","), "submit_output") {
		t.Errorf("tools %v, want submit_output among them", tools)
	}
	if strings.Contains(stderr.String(), "e2e-secret") {
		t.Errorf("the key is in the log:\n%s", stderr.String())
	}
}

// e2eChunk is one chat.completion.chunk event with delta and finish
// reason ("" for null).
func e2eChunk(delta, finish string) string {
	f := "null"
	if finish != "" {
		f = `"` + finish + `"`
	}
	return `data: {"id":"chatcmpl-e2e","object":"chat.completion.chunk","created":1764495600,"model":"some-model","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + f + "}]}\n\n"
}

// e2eDig walks nested JSON objects by key.
func e2eDig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}
