package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coda-acp/coda/internal/catalog"
)

func TestEnvDefault(t *testing.T) {
	tests := []struct {
		env  map[string]string
		want string
	}{
		{nil, ""},
		{map[string]string{"OPENROUTER_API_KEY": "k"}, "openrouter:anthropic/claude-sonnet-5.5"},
		{map[string]string{"OPENROUTER_API_KEY": "k", "GOOGLE_API_KEY": "k"}, "gemini:gemini-4-hydrogen"},
		{map[string]string{"GEMINI_API_KEY": "k", "OPENROUTER_API_KEY": "k"}, "gemini:gemini-4-hydrogen"},
		{map[string]string{"OPENROUTER_API_KEY": "k", "OPENAI_API_KEY": "k", "GEMINI_API_KEY": "k"}, "openai:gpt-5.5"},
		{map[string]string{"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"}, "anthropic:claude-sonnet-5-5"},
		{map[string]string{"ANTHROPIC_API_KEY": "  "}, ""},
	}
	for _, tt := range tests {
		if got := catalog.EnvDefault(configEnv(tt.env)); got != tt.want {
			t.Errorf("catalog.EnvDefault(%v) = %q, want %q", tt.env, got, tt.want)
		}
	}
}

// fakeOllama answers /api/tags with body (and status).
func fakeOllama(t *testing.T, status int, body string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/tags" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(status)
		w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestProbeOllama(t *testing.T) {
	tests := []struct {
		status     int
		body, want string
	}{
		// The first model that can call tools; an embedding model never.
		{200, `{"models":[{"name":"nomic-embed-text:latest"},{"name":"gemma3:4b"},{"name":"qwen3:8b"},{"name":"llama3.1:8b"}]}`, "ollama:qwen3:8b"},
		// Only models without tools: the first that chats.
		{200, `{"models":[{"name":"all-minilm","details":{"family":"bert"}},{"name":"gemma3:4b"},{"name":"phi3"}]}`, "ollama:gemma3:4b"},
		{200, `{"models":[]}`, ""},
		{200, `not json`, ""},
		{500, `{"error":"boom"}`, ""},
	}
	for _, tt := range tests {
		srv := fakeOllama(t, tt.status, tt.body)
		got, err := catalog.ProbeOllama(context.Background(), catalog.OllamaBase(srv.URL))
		if got != tt.want || (err == nil) != (tt.want != "") {
			t.Errorf("catalog.ProbeOllama(%s) = %q, %v; want %q", tt.body, got, err, tt.want)
		}
	}
	// Nothing listening: an error at once.
	if got, err := catalog.ProbeOllama(context.Background(), "http://127.0.0.1:1/v1"); got != "" || err == nil {
		t.Errorf("catalog.ProbeOllama(nothing) = %q, %v", got, err)
	}
}

// Serving with no model and no key, a local Ollama that answers becomes the
// default: found in the background, then in the model picker (before the
// config's picker models) and behind a successful authenticate.
func TestServe_ollamaDefault(t *testing.T) {
	ollama := fakeOllama(t, 200, `{"models":[{"name":"qwen3:8b"}]}`)
	home := t.TempDir()
	for k, v := range map[string]string{
		"HOME": home, "XDG_CONFIG_HOME": "", "XDG_STATE_HOME": "", "OLLAMA_HOST": ollama.URL,
		"ANTHROPIC_API_KEY": "", "OPENAI_API_KEY": "", "OPENROUTER_API_KEY": "", "GEMINI_API_KEY": "", "GOOGLE_API_KEY": "",
	} {
		t.Setenv(k, v)
	}
	// config.toml's [picker] models join the picker after the launch's.
	os.MkdirAll(filepath.Join(home, ".config", "coda"), 0o755)
	os.WriteFile(filepath.Join(home, ".config", "coda", "config.toml"), []byte("[picker]\nmodels = [\"openai:gpt-5.1\"]\n"), 0o600)
	stdin := strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}
{"jsonrpc":"2.0","id":1,"method":"authenticate","params":{"methodId":"env"}}
{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"` + home + `","mcpServers":[]}}
`)
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"--state-dir", t.TempDir()}, stdin, &stdout, &stderr); err != nil {
		t.Fatalf("serve: %v\n%s", err, stderr.String())
	}
	out := stdout.String()
	if !strings.Contains(out, `{"jsonrpc":"2.0","id":1,"result":{}}`) {
		t.Errorf("authenticate did not succeed with a local Ollama:\n%s", out)
	}
	if !strings.Contains(out, `"currentValue":"ollama:qwen3:8b","options":[{"value":"ollama:qwen3:8b","name":"ollama:qwen3:8b"},{"value":"openai:gpt-5.1","name":"openai:gpt-5.1"}]`) {
		t.Errorf("the model picker does not show Ollama's model:\n%s", out)
	}
}
