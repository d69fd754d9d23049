package main

import (
	"bytes"
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

// ollamaNoTools is the body Ollama answers, with HTTP 400, to a chat
// completion that offers tools to a model without the tools capability
// (ollama/ollama#6027).
const ollamaNoTools = `{"error":{"message":"registry.ollama.ai/library/gemma3:4b does not support tools","type":"api_error","param":null,"code":null}}`

// noToolsServer plays an Ollama whose model cannot call tools: a request
// that offers tools gets the recorded 400, any other a streamed answer.
// It keeps whether each request offered tools.
func noToolsServer(t *testing.T, answer string) (*httptest.Server, func() []bool) {
	var mu sync.Mutex
	var offered []bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Tools []json.RawMessage `json:"tools"`
		}
		json.NewDecoder(r.Body).Decode(&body)
		mu.Lock()
		offered = append(offered, len(body.Tools) > 0)
		mu.Unlock()
		if len(body.Tools) > 0 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, ollamaNoTools)
			return
		}
		text, _ := json.Marshal(answer)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, e2eChunk(fmt.Sprintf(`{"role":"assistant","content":%s}`, text), "stop")+"data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv, func() []bool {
		mu.Lock()
		defer mu.Unlock()
		return append([]bool(nil), offered...)
	}
}

// `coda run` against a server that refuses tools: the call is made again
// without them, the model's reply is the answer, and the warning is said
// once. With tools = false in the config, the first call offers none.
func TestRun_toolsUnsupportedFromServer(t *testing.T) {
	srv, offered := noToolsServer(t, `{"safe": true}`)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.toml")
	os.WriteFile(cfg, []byte(fmt.Sprintf("[providers.local]\nkind = \"openai\"\nbase_url = %q\n", srv.URL+"/v1")), 0o600)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang detector
	defer cancel()
	var stdout, stderr bytes.Buffer
	err := run(ctx, []string{"run", "--config", cfg, "--model", "local:gemma3:4b", "--state-dir", filepath.Join(dir, "state"),
		"--cwd", dir, "--output-format", "json", "--json", "Is it safe?"}, nil, &stdout, &stderr)
	if err != nil {
		t.Fatalf("run: %v\nstderr:\n%s", err, stderr.String())
	}
	var rec struct {
		Status, Content string
		Flags           []string
	}
	if err := json.Unmarshal(stdout.Bytes(), &rec); err != nil || rec.Status != "answered" || rec.Content != `{"safe": true}` {
		t.Fatalf("record %+v (%v):\n%s", rec, err, stdout.String())
	}
	if got := offered(); len(got) != 2 || !got[0] || got[1] {
		t.Errorf("requests offered tools: %v; want true, then false", got)
	}
	if n := strings.Count(stderr.String(), "coda: warning: local:gemma3:4b cannot call tools (its server says: HTTP 400 Bad Request: registry.ollama.ai/library/gemma3:4b does not support tools)"); n != 1 {
		t.Errorf("the warning %d times; stderr:\n%s", n, stderr.String())
	}

	// tools = false on the model: no refused call at all.
	srv2, offered2 := noToolsServer(t, `{"safe": true}`)
	os.WriteFile(cfg, []byte(fmt.Sprintf("[providers.local]\nkind = \"openai\"\nbase_url = %q\n[providers.local.models.\"gemma3:4b\"]\ntools = false\n", srv2.URL+"/v1")), 0o600)
	stdout.Reset()
	stderr.Reset()
	if err := run(ctx, []string{"run", "--config", cfg, "--model", "local:gemma3:4b", "--state-dir", filepath.Join(dir, "state"),
		"--cwd", dir, "--output-format", "json", "Is it safe?"}, nil, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\nstderr:\n%s", err, stderr.String())
	}
	if got := offered2(); len(got) != 1 || got[0] {
		t.Errorf("requests offered tools: %v; want one, without", got)
	}
	if strings.Contains(stderr.String(), "warning") {
		t.Errorf("a model known to lack tools is warned about:\n%s", stderr.String())
	}
}
