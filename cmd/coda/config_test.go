package main

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/provider/anthropic"
	"github.com/coda-acp/coda/engine/provider/gemini"
	"github.com/coda-acp/coda/engine/provider/ollama"
	"github.com/coda-acp/coda/engine/provider/openai"
	"github.com/coda-acp/coda/internal/catalog"
)

// providersOf are the config's providers by name, as its catalog has
// them.
func providersOf(c *config) map[string]*catalog.Provider {
	out := map[string]*catalog.Provider{}
	for _, name := range c.catalog.Names() {
		out[name] = c.catalog.Provider(name)
	}
	return out
}

// configEnv is a getenv over a map.
func configEnv(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func writeConfig(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadConfig(t *testing.T) {
	path := writeConfig(t, `
default_model = "local:qwen3:8b"

[providers.local]
kind = "openai"
base_url = "http://127.0.0.1:8080/v1"
headers = { "X-Team" = "docs" }
max_tokens = 4096
timeout = "90s"
max_call_time = "45m"
max_retries = 1
context_windows = { "qwen3:8b" = 40960 }

[providers.openai]
api_key_env = "MY_OPENAI_KEY"
timeout = 30

[providers.openrouter]
headers = { "X-Title" = "my editor" }

[providers.gateway]
kind = "anthropic"
base_url = "https://llm.example.com/anthropic"
api_key_env = "GATEWAY_KEY"
thinking_budget = 2048

[picker]
models = ["gateway:claude-opus-4-1", "ollama:qwen3"]
`)
	c, err := loadConfig(path, configEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.DefaultModel; got != "local:qwen3:8b" {
		t.Errorf("DefaultModel = %q", got)
	}
	if got := c.Picker.Models; !slices.Equal(got, []string{"gateway:claude-opus-4-1", "ollama:qwen3"}) {
		t.Errorf("Picker.Models = %q", got)
	}
	str := func(s string) *string { return &s }
	one := 1
	want := map[string]*catalog.Provider{
		"local": {
			Kind: "openai", BaseURL: "http://127.0.0.1:8080/v1", Headers: map[string]string{"X-Team": "docs"},
			MaxTokens: 4096, Timeout: catalog.Duration(90 * time.Second), MaxCallTime: catalog.Duration(45 * time.Minute), MaxRetries: &one,
			ContextWindows: map[string]int{"qwen3:8b": 40960},
		},
		"openai":    {Kind: "openai", API: "responses", BaseURL: "https://api.openai.com/v1", APIKeyEnv: str("MY_OPENAI_KEY"), Timeout: catalog.Duration(30 * time.Second)},
		"anthropic": {Kind: "anthropic", BaseURL: "https://api.anthropic.com", APIKeyEnv: str("ANTHROPIC_API_KEY")},
		"gemini":    {Kind: "gemini", BaseURL: "https://generativelanguage.googleapis.com/v1beta", APIKeyEnv: str("GEMINI_API_KEY"), AltKeyEnvs: []string{"GOOGLE_API_KEY"}},
		"ollama":    {Kind: "ollama", BaseURL: "http://localhost:11434", APIKeyEnv: str("")},
		"openrouter": {
			Kind: "openai", BaseURL: "https://openrouter.ai/api/v1", APIKeyEnv: str("OPENROUTER_API_KEY"),
			Headers: map[string]string{"HTTP-Referer": "https://github.com/coda-acp/coda", "X-Title": "my editor"},
		},
		"gateway": {Kind: "anthropic", BaseURL: "https://llm.example.com/anthropic", APIKeyEnv: str("GATEWAY_KEY"), ThinkingBudget: 2048},
	}
	if diff := cmp.Diff(want, providersOf(c)); diff != "" {
		t.Errorf("providers (-want +got):\n%s", diff)
	}
}

func TestLoadConfig_errors(t *testing.T) {
	tests := []struct{ text, want string }{
		{`default_modle = "x:y"`, "unknown key default_modle"},
		{"[providers.openai]\napi_key = \"sk-1\"", "unknown key providers.openai.api_key: keys are read from the environment only"},
		{"[providers.local]\nbase_url = \"http://x/v1\"\nknd = \"openai\"", "unknown key providers.local.knd"},
		{"[providers.local]\nbase_url = \"http://x/v1\"", "providers.local.kind is missing"},
		{"[providers.local]\nkind = \"bedrock\"", `providers.local.kind = "bedrock": want "openai", "anthropic", "gemini" or "ollama"`},
		{"[providers.local]\nkind = \"openai\"\ncache = false", `providers.local.cache: only a provider of kind "anthropic" takes cache`},
		{"[providers.local]\nkind = \"openai\"\nbase_url = \"localhost:8080\"", "providers.local.base_url"},
		{"[providers.openai]\ntimeout = \"soon\"", `"soon" is not a duration`},
		{"[providers.openai]\nmax_retries = -1", "cannot be negative"},
		{"[providers.openai]\nmax_call_time = \"-1m\"", "cannot be negative"},
		{"[providers.script]\nkind = \"openai\"", "the name script is reserved"},
		{"[providers.openai]\napi_key_env = \"sk-abc = 1\"", "want the name of an environment variable"},
		{`default_model = "claude"`, "default_model: model \"claude\": want PROVIDER:MODEL"},
		{"[picker]\nmodels = [\"openai:gpt-5.1\", \"gpt-4o\"]", "picker.models[1]: model \"gpt-4o\": want PROVIDER:MODEL"},
		{"[picker]\nmodel = [\"openai:gpt-5.1\"]", "unknown key picker.model"},
		{"[providers.x]\nkind = \"openai\"\ncontext_windows = { m = 0 }", "want a positive number of tokens"},
		{`default_model = `, "config "},
		{"[providers.openai]\nheaders = { Authorization = \"Bearer sk-1\" }", "providers.openai.headers: Authorization would put a credential in the file"},
		{"[providers.openai]\napi = \"completions\"", `providers.openai.api = "completions": want "chat"`},
		{"[providers.anthropic]\napi = \"chat\"", `providers.anthropic.api: only a provider of kind "openai" takes an api`},
		{"[providers.openai]\neffort = \"extreme\"", `providers.openai.effort: "extreme" is not a level: want one of off, minimal, low, medium, high, xhigh, max`},
		{"[providers.openai.models.\"gpt-5.4\"]\neffort = \"HIGH\"", `providers.openai.models."gpt-5.4".effort: "HIGH" is not a level`},
		{"[providers.ollama]\nnum_ctx = -1", "cannot be negative"},
		{"[providers.openai]\nnum_ctx = 8192", `providers.openai.num_ctx: only a provider of kind "ollama" takes num_ctx`},
		{"[providers.local]\nkind = \"ollama\"\napi = \"chat\"", `providers.local.api: only a provider of kind "openai" takes an api`},
		{"[providers.openai]\nstructured = \"json\"", `providers.openai.structured is "json": want "auto", "tool", "native" or "prompted"`},
		{"[providers.local]\nkind = \"openai\"\nserver = \"sglang\"", `providers.local.server = "sglang": want "vllm" or "llama.cpp"`},
		{"[providers.anthropic]\nserver = \"vllm\"", `providers.anthropic.server: only a provider of kind "openai" takes a server`},
		{"[providers.openai.models.\"gpt-5.4\"]\nstructured = \"strict\"", `providers.openai.models."gpt-5.4".structured is "strict"`},
	}
	for _, tt := range tests {
		path := writeConfig(t, tt.text)
		_, err := loadConfig(path, configEnv(nil))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: error %v, want it to contain %q", tt.text, err, tt.want)
		}
	}
}

func TestLoadConfig_defaultPath(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "coda"), 0o700); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "coda", "config.toml"), []byte(`default_model = "ollama:llama3.1"`), 0o600)

	c, err := loadConfig("", configEnv(map[string]string{"XDG_CONFIG_HOME": dir}))
	if err != nil || c.DefaultModel != "ollama:llama3.1" {
		t.Errorf("XDG_CONFIG_HOME: %v, %v", c, err)
	}
	// ~/.config when XDG_CONFIG_HOME is unset.
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".config", "coda"), 0o700)
	os.WriteFile(filepath.Join(home, ".config", "coda", "config.toml"), []byte(`default_model = "openai:gpt-5.1"`), 0o600)
	c, err = loadConfig("", configEnv(map[string]string{"HOME": home}))
	if err != nil || c.DefaultModel != "openai:gpt-5.1" {
		t.Errorf("HOME: %v, %v", c, err)
	}
	// No file: the built-in providers only.
	c, err = loadConfig("", configEnv(map[string]string{"XDG_CONFIG_HOME": t.TempDir()}))
	if err != nil || c.DefaultModel != "" || len(c.catalog.Names()) != 5 {
		t.Errorf("no file: %+v, %v", c, err)
	}
	// A named file that is missing is an error.
	if _, err := loadConfig(filepath.Join(t.TempDir(), "nope.toml"), configEnv(nil)); err == nil {
		t.Error("a missing --config file is not an error")
	}
}

func TestConfigDefaultPath(t *testing.T) {
	if got := configDefaultPath(configEnv(map[string]string{"XDG_CONFIG_HOME": "/x", "HOME": "/h"})); got != "/x/coda/config.toml" {
		t.Errorf("got %q", got)
	}
	if got := configDefaultPath(configEnv(map[string]string{"HOME": "/h"})); got != "/h/.config/coda/config.toml" {
		t.Errorf("got %q", got)
	}
	if got := configDefaultPath(configEnv(nil)); got != "" {
		t.Errorf("got %q", got)
	}
}

func TestConfigOllamaBase(t *testing.T) {
	for in, want := range map[string]string{
		"":                       "http://localhost:11434",
		"127.0.0.1":              "http://127.0.0.1:11434",
		"0.0.0.0:8080":           "http://0.0.0.0:8080",
		"https://ollama.example": "https://ollama.example:11434",
		"http://gpu-box:11434/":  "http://gpu-box:11434",
		"http://proxy:80/ollama": "http://proxy:80/ollama",
		"[::1]":                  "http://[::1]:11434",
	} {
		if got := catalog.OllamaBase(in); got != want {
			t.Errorf("catalog.OllamaBase(%q) = %q, want %q", in, got, want)
		}
	}
	c, err := loadConfig("", configEnv(map[string]string{"OLLAMA_HOST": "gpu-box:11500"}))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.catalog.Provider("ollama").BaseURL; got != "http://gpu-box:11500" {
		t.Errorf("ollama base %q", got)
	}
}

func TestConfig_models(t *testing.T) {
	path := writeConfig(t, `
[providers.local]
kind = "openai"
base_url = "http://127.0.0.1:8080/v1"
context_windows = { "tiny" = 2048 }

[providers.ollamav1]
kind = "openai"
base_url = "http://localhost:11434/v1"

[providers.chat]
kind = "openai"
api = "chat"
api_key_env = "OPENAI_API_KEY"

[providers.resp]
kind = "openai"
api = "responses"
api_key_env = "OPENAI_API_KEY"
`)
	c, err := loadConfig(path, configEnv(map[string]string{"OPENAI_API_KEY": "sk-o", "ANTHROPIC_API_KEY": "sk-a", "GOOGLE_API_KEY": "g-key"}))
	if err != nil {
		t.Fatal(err)
	}
	ms := c.models()
	for spec, want := range map[string]llm.Model{
		"openai:gpt-5.1":              (*openai.Responses)(nil),
		"chat:gpt-5.1":                (*openai.Model)(nil),
		"resp:gpt-5.1":                (*openai.Responses)(nil),
		"anthropic:claude-sonnet-4-5": (*anthropic.Model)(nil),
		"gemini:gemini-2.5-pro":       (*gemini.Model)(nil), // its key read from GOOGLE_API_KEY
		"ollama:llama3.1:8b":          (*ollama.Model)(nil),
		"ollamav1:llama3.1:8b":        (*openai.Model)(nil),
		"local:tiny":                  (*openai.Model)(nil),
	} {
		m, err := ms.Model(spec)
		if err != nil {
			t.Errorf("%s: %v", spec, err)
			continue
		}
		if m.Name() != spec {
			t.Errorf("%s: Name() = %q", spec, m.Name())
		}
		if reflect.TypeOf(m) != reflect.TypeOf(want) {
			t.Errorf("%s: %T, want %T", spec, m, want)
		}
		if again, _ := ms.Model(spec); again != m {
			t.Errorf("%s: a second Model call made a new model", spec)
		}
	}

	for spec, want := range map[string]string{
		"openrouter:openai/gpt-4o": "model openrouter:openai/gpt-4o needs OPENROUTER_API_KEY: set it in the environment (or api_key_env in [providers.openrouter])",
		"vertex:gemini-2.5-pro":    `model vertex:gemini-2.5-pro: unknown provider "vertex": use one of anthropic, chat, gemini, local, ollama, ollamav1, openai, openrouter, resp, script, or add [providers.vertex] to the config file`,
		"deepseek-v4-flash":        `model "deepseek-v4-flash": no provider is known to serve it by that name`,
	} {
		_, err := ms.Model(spec)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", spec, err, want)
		}
		if !errors.Is(err, llm.ErrModelUnavailable) {
			t.Errorf("%s: error %v does not wrap ErrModelUnavailable", spec, err)
		}
	}
}

func TestConfig_preflight(t *testing.T) {
	scriptPath := filepath.Join(t.TempDir(), "model.toml")
	os.WriteFile(scriptPath, []byte("[[turn]]\ntext = \"hi\"\n"), 0o600)
	c, err := loadConfig("", configEnv(map[string]string{"ANTHROPIC_API_KEY": "sk-a", "XDG_CONFIG_HOME": t.TempDir()}))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.catalog.Check("anthropic:claude-sonnet-4-5", "ollama:llama3.1", "script:"+scriptPath); err != nil {
		t.Errorf("preflight: %v", err)
	}
	tests := map[string]string{
		"openai:gpt-5.1":       "model openai:gpt-5.1 needs OPENAI_API_KEY: set it in the environment (or api_key_env in [providers.openai])",
		"script:/no/such.toml": "model script:/no/such.toml: ",
		"foo:bar":              `unknown provider "foo"`,
		"anthropic:":           "want PROVIDER:MODEL",
	}
	for spec, want := range tests {
		err := c.catalog.Check("anthropic:claude-sonnet-4-5", spec)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line containing %q", spec, err, want)
		}
	}
}

// The settings of a [providers.NAME] reach the model: base URL, key
// variable, headers, max_tokens, retries and the context window override.
func TestConfig_models_settings(t *testing.T) {
	var calls int
	var got *http.Request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		got = r.Clone(context.Background())
		if calls == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte(`data: {"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1}}` + "\n\ndata: [DONE]\n\n"))
	}))
	defer srv.Close()
	path := writeConfig(t, `
[providers.lab]
kind = "openai"
base_url = "`+srv.URL+`/v1"
api_key_env = "LAB_KEY"
headers = { "X-Team" = "docs" }
max_retries = 1
timeout = "5s"
context_windows = { "m1" = 32768 }
`)
	c, err := loadConfig(path, configEnv(map[string]string{"LAB_KEY": "lab-secret"}))
	if err != nil {
		t.Fatal(err)
	}
	var waits []time.Duration
	c.models().sleep = func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }
	m, err := c.models().Model("lab:m1")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := m.Stream(context.Background(), &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Text: "x"}}}, func(llm.Delta) error { return nil })
	if err != nil {
		t.Fatal(err) // the 503 is retried once: max_retries = 1
	}
	if len(waits) != 1 || calls != 2 || resp.Text != "ok" || resp.Usage.ContextWindow != 32768 {
		t.Errorf("%d calls, response %+v", calls, resp)
	}
	if got.URL.Path != "/v1/chat/completions" || got.Header.Get("Authorization") != "Bearer lab-secret" || got.Header.Get("X-Team") != "docs" {
		t.Errorf("request %s %v", got.URL.Path, got.Header)
	}
}

// max_call_time reaches the provider: a server that keeps a call alive with
// keep-alive comments is stopped when it runs out.
func TestConfig_maxCallTime(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			if _, err := io.WriteString(w, ": keep-alive\n"); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-tick.C:
			}
		}
	}))
	defer srv.Close()
	for _, kind := range []string{"openai", "anthropic"} {
		path := writeConfig(t, "[providers.lab]\nkind = \""+kind+"\"\nbase_url = \""+srv.URL+"/v1\"\napi_key_env = \"\"\nmax_call_time = \"100ms\"\n")
		c, err := loadConfig(path, configEnv(nil))
		if err != nil {
			t.Fatal(err)
		}
		m, err := c.models().Model("lab:m1")
		if err != nil {
			t.Fatal(err)
		}
		_, err = m.Stream(context.Background(), &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Text: "x"}}}, func(llm.Delta) error { return nil })
		if err == nil || !strings.Contains(err.Error(), "no whole reply within 100ms (the provider's max_call_time)") {
			t.Errorf("%s: error %v", kind, err)
		}
	}
}

// effort: a model's own table's, else its provider's; a level the
// catalog says the model does not take is refused before any call, naming
// the levels it takes.
func TestConfig_effort(t *testing.T) {
	path := writeConfig(t, `
[providers.openai]
effort = "xhigh"

[providers.openai.models."gpt-5.4-mini"]
effort = "low"
`)
	c, err := loadConfig(path, configEnv(map[string]string{"OPENAI_API_KEY": "sk-o", "ANTHROPIC_API_KEY": "sk-a"}))
	if err != nil {
		t.Fatal(err)
	}
	_, big := c.catalog.Efforts("openai:gpt-5.4")
	_, mini := c.catalog.Efforts("openai:gpt-5.4-mini")
	if big != "xhigh" || mini != "low" {
		t.Errorf("effort %q, %q", big, mini)
	}
	if err := c.catalog.Check("openai:gpt-5.5", "openai:gpt-5.4-mini"); err != nil {
		t.Errorf("levels the models take: %v", err)
	}
	// A model of no known levels takes the basic four; one that does not
	// reason takes none but off.
	for spec, want := range map[string]string{
		"openai:o-test":  `the config's [providers.openai] effort xhigh: model openai:o-test takes off, low, medium, high`,
		"openai:gpt-4.1": `the config's [providers.openai] effort xhigh: model openai:gpt-4.1 does not reason: it takes no effort but off`,
	} {
		if err := c.catalog.Check(spec); err == nil || err.Error() != want || !errors.Is(err, catalog.ErrEffort) {
			t.Errorf("%s: %v, want %q", spec, err, want)
		}
	}
	// --effort wins over the file, and is checked the same way.
	if err := c.catalog.SetEffort("max"); err != nil {
		t.Fatal(err)
	}
	if err := c.catalog.Check("anthropic:claude-opus-4-7"); err != nil {
		t.Errorf("opus 4.7 at max: %v", err)
	}
	want := "--effort max: model openai:gpt-5.5 takes off, low, medium, high, xhigh"
	if err := c.catalog.Check("openai:gpt-5.5"); err == nil || err.Error() != want {
		t.Errorf("gpt-5.5 at max: %v, want %q", err, want)
	}
	if err := c.catalog.SetEffort("extreme"); err == nil || !strings.Contains(err.Error(), `"extreme" is not a level: want one of off, minimal, low, medium, high, xhigh, max`) {
		t.Errorf("setEffort: %v", err)
	}
}

// A model table's effort names its model: a level the model cannot take
// stops the config's load with the levels it takes.
func TestConfig_effortOfAModelTable(t *testing.T) {
	path := writeConfig(t, `
[providers.anthropic.models."claude-haiku-4-5"]
effort = "xhigh"
`)
	_, err := loadConfig(path, configEnv(nil))
	if err == nil || !strings.Contains(err.Error(), `providers.anthropic.models."claude-haiku-4-5".effort = "xhigh": claude-haiku-4-5 takes off, low, medium, high`) {
		t.Errorf("error %v", err)
	}
}

// structured on a provider, or on one of its models (which wins), is what
// the engine is told of the model (DESIGN §17).
func TestModelFacts_structured(t *testing.T) {
	c, err := loadConfig(writeConfig(t, "[providers.local]\nkind = \"openai\"\nbase_url = \"http://localhost:8080/v1\"\nstructured = \"native\"\n[providers.local.models.\"m2\"]\nstructured = \"prompted\"\n"), configEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	for spec, want := range map[string]string{"local:m1": "native", "local:m2": "prompted", "openai:gpt-5.5": ""} {
		if got := c.catalog.Facts(spec).Structured; got != want {
			t.Errorf("%s: structured %q, want %q", spec, got, want)
		}
	}
}
