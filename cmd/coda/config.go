package main

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/coda-acp/coda/engine/provider"
	"github.com/coda-acp/coda/engine/taint"
	"github.com/coda-acp/coda/internal/catalog"
	"github.com/coda-acp/coda/internal/telemetry/otlp"
	"github.com/coda-acp/coda/outputspec"
)

// config is the config file (config.toml): the default model and the model
// providers, on top of the built-in ones. API keys are never in it, only
// the names of the environment variables that hold them. This file decodes
// and checks it, one function per table; what it says of models is the
// catalog's to answer (internal/catalog, built from it by loadConfig).
//
//	default_model = "anthropic:claude-sonnet-5-5"
//
//	[providers.local]
//	kind = "openai"                      # "openai" | "anthropic" (messages) | "gemini" (generateContent) | "ollama" (Ollama's own /api/chat)
//	api = "chat"                         # openai: "chat" (chat completions, the default) | "responses"
//	server = "vllm"                      # openai chat: "vllm" | "llama.cpp": a constrained reply in the server's own field
//	base_url = "http://localhost:8080/v1"
//	api_key_env = "LOCAL_KEY"            # "" or absent for a server without keys
//	headers = { "X-Team" = "docs" }
//	max_tokens = 8192
//	thinking_budget = 4096               # anthropic: budgeted thinking, for the models that still take it
//	cache = false                        # anthropic: no prompt caching (on by default)
//	effort = "high"                      # reasoning effort when none is asked: off, minimal, low, medium, high, xhigh, max
//	num_ctx = 32768                      # ollama: the most context asked of the server (default: the model's own)
//	timeout = "2m"                       # silence before a try is abandoned; or seconds
//	max_call_time = "30m"                # a whole call, tries included (default 30m)
//	max_retries = 3                      # tries after the first
//	context_windows = { "my-model" = 32768 }
//	tools = false                        # its models cannot call tools: they answer by reply
//	vision = false                       # its models cannot see images (each is sent as a line of text)
//	structured = "prompted"              # the strongest way an answer is asked for: "auto" (default) | "tool" | "native" | "prompted"
//
//	[providers.local.models."gemma3:4b"]  # one model's own facts, over its provider's
//	tools = false
//	vision = true
//	effort = "low"
//
//	[taint]                              # the taint gate (DESIGN §13); off by default
//	policy = "ask"                       # "off" | "allow" | "deny" | "ask"
//	private = ["**/.env", "**/*.pem"]    # default: taint.DefaultPrivate
//
//	[picker]
//	models = ["openai:gpt-5.5", "ollama:qwen3"]   # more choices in the editor's model picker
//	discover = false                     # no live list of the providers' models beside them
//
//	[mcp]
//	max_tools = 128                      # the most tools a model request offers, coda's own and MCP together
//
//	[mime]
//	max_part_bytes = 33554432            # the largest artifact a run copies into its record (default 10 MiB)
//	overwrite_artifacts = false          # for the answers whose specs do not say
type config struct {
	DefaultModel string                      `toml:"default_model"`
	Providers    map[string]catalog.Provider `toml:"providers"`
	Picker       struct {
		Models []string `toml:"models"`
		// Discover = false keeps the picker to Models: no provider is
		// asked for its list (internal/catalog/discover.go).
		Discover *bool `toml:"discover"`
	} `toml:"picker"`
	// MaxModelCalls caps the model calls of one turn (default 200); a turn
	// that reaches it ends with stopReason max_turn_requests.
	MaxModelCalls int `toml:"max_model_calls"`
	// Taint is [taint]: the taint gate, unless the blueprint or --taint
	// says otherwise.
	Taint *taint.Config `toml:"taint"`
	// MCP is [mcp]: max_tools caps the tools one model request offers,
	// coda's own and the session's MCP servers' together (default 128,
	// OpenAI's limit; engine.Engine.MaxTools); one warning names the MCP
	// tools left out.
	MCP struct {
		MaxTools int `toml:"max_tools"`
	} `toml:"mcp"`
	// Commentary is how serving streams the work of an agent that
	// answers: "thought" (the default) or "message" (--commentary wins).
	Commentary string `toml:"commentary"`
	// MIME is [mime], Leviath's table of part limits, as far as coda has
	// its meaning (DESIGN §25): max_part_bytes is the largest artifact a
	// run copies into its record (engine.Engine.MaxArtifactCopy; 0 is 10
	// MiB); overwrite_artifacts is the default of the answers' specs that
	// do not say (blueprint.Blueprint.OverwriteArtifacts).
	MIME struct {
		MaxPartBytes       int64 `toml:"max_part_bytes"`
		OverwriteArtifacts *bool `toml:"overwrite_artifacts"`
	} `toml:"mime"`
	// Models is [models."PROVIDER:MODEL"]: what a model costs (prices.go).
	Models map[string]modelSettings `toml:"models"`
	// Telemetry is [telemetry]: where traces go when the environment's
	// OTEL_EXPORTER_OTLP_* does not say (endpoint, headers), and whether
	// they carry the prompt and answer text (include_content).
	Telemetry otlp.Config `toml:"telemetry"`

	// catalog answers what the file says of models, over the built-in
	// providers and the model table.
	catalog *catalog.Catalog
	// modelSet are the catalog's models, one per spec (models.go).
	modelSet *configModels
}

// configDefaultPath is $XDG_CONFIG_HOME/coda/config.toml, or
// ~/.config/coda/config.toml; "" when neither variable is set.
func configDefaultPath(getenv func(string) string) string {
	if dir := getenv("XDG_CONFIG_HOME"); dir != "" {
		return filepath.Join(dir, "coda", "config.toml")
	}
	if home := getenv("HOME"); home != "" {
		return filepath.Join(home, ".config", "coda", "config.toml")
	}
	return ""
}

// loadConfig reads the config file at path; "" means the default path when
// a file is there, else no file (the built-in providers only). Unknown keys
// are errors naming the key. The catalog is built from what it decoded.
func loadConfig(path string, getenv func(string) string) (*config, error) {
	c := &config{}
	if path == "" {
		if p := configDefaultPath(getenv); p != "" {
			if _, err := os.Stat(p); err == nil {
				path = p
			}
		}
	}
	if path != "" {
		if err := c.decode(path, getenv); err != nil {
			return nil, err
		}
	}
	c.catalog = catalog.New(catalog.Options{
		Providers: c.Providers, Default: c.DefaultModel, Picker: c.Picker.Models,
		NoDiscover: c.Picker.Discover != nil && !*c.Picker.Discover, Getenv: getenv,
		Prices: c.prices(),
	})
	c.modelSet = newConfigModels(c.catalog)
	return c, nil
}

// decode reads the file at path into c, strictly, and checks it.
func (c *config) decode(path string, getenv func(string) string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	md, err := toml.Decode(string(data), c)
	if err != nil {
		return fmt.Errorf("config %s: %w", path, err)
	}
	if keys := md.Undecoded(); len(keys) > 0 {
		k := keys[0].String()
		hint := ""
		switch {
		case strings.HasSuffix(k, ".api_key"):
			hint = ": keys are read from the environment only; name the variable with api_key_env"
		case strings.HasPrefix(k, "mime."):
			hint = ": coda's [mime] takes max_part_bytes and overwrite_artifacts; it keeps no typed parts, so Leviath's other part limits have nothing to bound (docs/leviath.md)"
		}
		return fmt.Errorf("config %s: unknown key %s%s", path, k, hint)
	}
	if err := c.check(catalog.Builtins(getenv)); err != nil {
		return fmt.Errorf("config %s: %w", path, err)
	}
	return nil
}

// check validates what the file says, table by table, naming the key at
// fault; builtins are the built-in providers, which a [providers.NAME]
// may set over.
func (c *config) check(builtins map[string]*catalog.Provider) error {
	if err := c.checkPrices(); err != nil {
		return err
	}
	if c.MIME.MaxPartBytes < 0 {
		return fmt.Errorf("mime.max_part_bytes = %d: want a positive number of bytes, or leave it out for 10 MiB", c.MIME.MaxPartBytes)
	}
	if err := checkTaint(c.Taint); err != nil {
		return err
	}
	if err := c.checkModels(); err != nil {
		return err
	}
	for name, p := range c.Providers {
		if err := checkProvider(name, p, builtins[name]); err != nil {
			return err
		}
	}
	return nil
}

// checkTaint checks [taint].
func checkTaint(t *taint.Config) error {
	if t == nil {
		return nil
	}
	if err := taint.CheckPolicy(t.Policy); err != nil {
		return fmt.Errorf("taint.policy: %w", err)
	}
	if err := taint.CheckPrivate(t.Private); err != nil {
		return fmt.Errorf("taint.private: %w", err)
	}
	return nil
}

// checkModels checks default_model and [picker] models: each a
// PROVIDER:MODEL.
func (c *config) checkModels() error {
	if c.DefaultModel != "" {
		if _, _, err := catalog.SplitSpec(c.DefaultModel); err != nil {
			return fmt.Errorf("default_model: %w", err)
		}
	}
	for i, m := range c.Picker.Models {
		if _, _, err := catalog.SplitSpec(m); err != nil {
			return fmt.Errorf("picker.models[%d]: %w", i, err)
		}
	}
	return nil
}

// checkProvider checks one [providers.NAME] table; builtin is the built-in
// provider of that name, nil for none.
func checkProvider(name string, p catalog.Provider, builtin *catalog.Provider) error {
	key := "providers." + name
	kind := p.Kind
	if builtin != nil && kind == "" {
		kind = builtin.Kind
	}
	for _, check := range []func(string, string, *catalog.Provider) error{
		checkProviderName, checkProviderKind, checkProviderAccess, checkProviderLimits, checkProviderAPI, checkProviderModels,
	} {
		if err := check(key, kind, &p); err != nil {
			return err
		}
	}
	return nil
}

// checkProviderName refuses a name no spec could name: script is script:
// PATH's, and a spec splits at the first colon.
func checkProviderName(key, _ string, _ *catalog.Provider) error {
	switch name := strings.TrimPrefix(key, "providers."); {
	case name == "script":
		return fmt.Errorf("[%s]: the name script is reserved for script:PATH models", key)
	case name == "" || strings.ContainsAny(name, ": "):
		return fmt.Errorf("[%s]: a provider name cannot be empty or contain ':' or spaces", key)
	}
	return nil
}

// checkProviderKind checks kind: needed by a provider that is not built in
// (kind is then the table's own).
func checkProviderKind(key, kind string, _ *catalog.Provider) error {
	switch kind {
	case "":
		return fmt.Errorf("%s.kind is missing: say \"openai\" (OpenAI and what speaks its API: vLLM, llama.cpp, LM Studio, OpenRouter, Ollama's /v1), \"anthropic\", \"gemini\" or \"ollama\" (Ollama's own API)", key)
	case catalog.KindOpenAI, catalog.KindAnthropic, catalog.KindGemini, catalog.KindOllama:
		return nil
	}
	return fmt.Errorf("%s.kind = %q: want \"openai\", \"anthropic\", \"gemini\" or \"ollama\"", key, kind)
}

// checkProviderAccess checks how the provider is reached: its URL, the
// name of its key's variable, and headers that hold no credential.
func checkProviderAccess(key, _ string, p *catalog.Provider) error {
	if p.BaseURL != "" {
		u, err := url.Parse(p.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("%s.base_url = %q: want an http or https URL such as \"http://localhost:11434/v1\"", key, p.BaseURL)
		}
	}
	if p.APIKeyEnv != nil && strings.ContainsAny(*p.APIKeyEnv, " =") {
		return fmt.Errorf("%s.api_key_env = %q: want the name of an environment variable (the key itself never goes in the file)", key, *p.APIKeyEnv)
	}
	for h := range p.Headers {
		switch strings.ToLower(h) {
		case "authorization", "x-api-key", "api-key", "x-goog-api-key", "proxy-authorization":
			return fmt.Errorf("%s.headers: %s would put a credential in the file; keys are read from the environment only: name the variable with api_key_env", key, h)
		}
	}
	return nil
}

// checkProviderLimits checks the numbers: none negative, every window
// positive.
func checkProviderLimits(key, _ string, p *catalog.Provider) error {
	if p.MaxTokens < 0 || p.ThinkingBudget < 0 || p.NumCtx < 0 || (p.MaxRetries != nil && *p.MaxRetries < 0) {
		return fmt.Errorf("%s: max_tokens, thinking_budget, num_ctx and max_retries cannot be negative", key)
	}
	for m, n := range p.ContextWindows {
		if n <= 0 {
			return fmt.Errorf("%s.context_windows.%q = %d: want a positive number of tokens", key, m, n)
		}
	}
	return nil
}

// checkProviderAPI checks the keys only some kinds take (api, server,
// num_ctx, cache), and the table's effort and structured.
func checkProviderAPI(key, kind string, p *catalog.Provider) error {
	if p.API != "" && (kind != catalog.KindOpenAI || p.API != provider.APIChat && p.API != provider.APIResponses) {
		if kind != catalog.KindOpenAI {
			return fmt.Errorf("%s.api: only a provider of kind \"openai\" takes an api", key)
		}
		return fmt.Errorf("%s.api = %q: want \"chat\" (chat completions, what compatible servers speak) or \"responses\" (OpenAI's Responses API)", key, p.API)
	}
	if p.Server != "" && (kind != catalog.KindOpenAI || p.Server != provider.ServerVLLM && p.Server != provider.ServerLlamaCpp) {
		if kind != catalog.KindOpenAI {
			return fmt.Errorf("%s.server: only a provider of kind \"openai\" takes a server", key)
		}
		return fmt.Errorf("%s.server = %q: want \"vllm\" or \"llama.cpp\" (leave it out for any other server)", key, p.Server)
	}
	if p.NumCtx != 0 && kind != catalog.KindOllama {
		return fmt.Errorf("%s.num_ctx: only a provider of kind \"ollama\" takes num_ctx", key)
	}
	if err := catalog.CheckLevel(p.Effort); err != nil {
		return fmt.Errorf("%s.effort: %w", key, err)
	}
	if err := outputspec.CheckStructured(p.Structured); err != nil {
		return fmt.Errorf("%s.structured %w", key, err)
	}
	if p.Cache != nil && kind != catalog.KindAnthropic {
		return fmt.Errorf("%s.cache: only a provider of kind \"anthropic\" takes cache (the other APIs cache prompts by themselves)", key)
	}
	return nil
}

// checkProviderModels checks each [providers.NAME.models."MODEL"] table:
// it names its model, so its effort is checked against that model's
// levels now.
func checkProviderModels(key, _ string, p *catalog.Provider) error {
	name := strings.TrimPrefix(key, "providers.")
	for m, mc := range p.Models {
		if err := outputspec.CheckStructured(mc.Structured); err != nil {
			return fmt.Errorf("%s.models.%q.structured %w", key, m, err)
		}
		if err := catalog.CheckLevel(mc.Effort); err != nil {
			return fmt.Errorf("%s.models.%q.effort: %w", key, m, err)
		}
		if takes := catalog.EffortsTaken(name + ":" + m); mc.Effort != "" && !slices.Contains(takes, mc.Effort) {
			return fmt.Errorf("%s.models.%q.effort = %q: %s takes %s", key, m, mc.Effort, m, strings.Join(takes, ", "))
		}
	}
	return nil
}
