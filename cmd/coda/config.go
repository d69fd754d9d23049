package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/provider"
	"github.com/coda-acp/coda/engine/provider/anthropic"
	"github.com/coda-acp/coda/engine/provider/gemini"
	"github.com/coda-acp/coda/engine/provider/ollama"
	"github.com/coda-acp/coda/engine/provider/openai"
	"github.com/coda-acp/coda/engine/provider/script"
	"github.com/coda-acp/coda/engine/provider/sse"
	"github.com/coda-acp/coda/engine/taint"
	"github.com/coda-acp/coda/outputspec"
)

// config is the config file (config.toml): the default model and the model
// providers, on top of the built-in ones. API keys are never in it, only
// the names of the environment variables that hold them.
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
	DefaultModel string                    `toml:"default_model"`
	Providers    map[string]providerConfig `toml:"providers"`
	Picker       struct {
		Models []string `toml:"models"`
		// Discover = false keeps the picker to Models: no provider is
		// asked for its list (discover.go).
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

	getenv    func(string) string
	effort    string                                     // --effort: every model's, over the file's
	log       *slog.Logger                               // the providers' warnings; nil discards them
	providers map[string]*providerConfig                 // built-ins merged with the file's
	sleep     func(context.Context, time.Duration) error // backoff waits; nil is a real timer (tests inject one)

	mu     sync.Mutex
	cached map[string]llm.Model // by spec: a model keeps state across calls (a script's turns)
	// listedWindows are the windows the providers' listings gave, by spec
	// (discover.go), under their own lock: Model holds mu while it asks
	// modelFacts.
	listedMu      sync.Mutex
	listedWindows map[string]int
}

// providerConfig is one [providers.NAME] table.
type providerConfig struct {
	Kind           string            `toml:"kind"`
	API            string            `toml:"api"`
	Server         string            `toml:"server"` // the software behind a kind "openai" chat endpoint (provider.Server*)
	BaseURL        string            `toml:"base_url"`
	APIKeyEnv      *string           `toml:"api_key_env"`
	Headers        map[string]string `toml:"headers"`
	MaxTokens      int               `toml:"max_tokens"`
	ThinkingBudget int               `toml:"thinking_budget"`
	Effort         string            `toml:"effort"`
	// Cache = false turns Anthropic's prompt caching off.
	Cache          *bool          `toml:"cache"`
	NumCtx         int            `toml:"num_ctx"`
	Timeout        configDuration `toml:"timeout"`
	MaxCallTime    configDuration `toml:"max_call_time"`
	MaxRetries     *int           `toml:"max_retries"`
	ContextWindows map[string]int `toml:"context_windows"`
	// Tools = false: the provider's models cannot call tools (DESIGN §15);
	// Vision = false: they cannot see images. Models holds one model's own
	// facts, which win (models.go: modelFacts and sees).
	Tools  *bool                  `toml:"tools"`
	Vision *bool                  `toml:"vision"`
	Models map[string]modelConfig `toml:"models"`
	// Structured is the strongest mechanism an answer is asked through
	// (DESIGN §17: outputspec.Structured*): a server known to refuse
	// strict schemas or a forced tool is set "native" or "prompted".
	Structured string `toml:"structured"`

	// AltKeyEnvs are the variables a built-in provider also reads its key
	// from when APIKeyEnv's is unset (Gemini's GOOGLE_API_KEY); setting
	// api_key_env drops them.
	AltKeyEnvs []string `toml:"-"`
}

// modelConfig is one [providers.NAME.models."MODEL"] table: what is known
// of one model of the provider, over what the provider's table says.
type modelConfig struct {
	Tools      *bool  `toml:"tools"`
	Vision     *bool  `toml:"vision"`
	Effort     string `toml:"effort"`
	Structured string `toml:"structured"`
}

const (
	providerKindOpenAI    = "openai"
	providerKindAnthropic = "anthropic"
	providerKindOllama    = "ollama" // Ollama's own /api/chat; its /v1 is kind "openai"
	providerKindGemini    = "gemini"
)

// configDuration is a duration written as "90s" / "2m", or as seconds.
type configDuration time.Duration

func (d *configDuration) UnmarshalTOML(v any) error {
	switch v := v.(type) {
	case string:
		p, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("%q is not a duration (write e.g. \"90s\" or \"2m\")", v)
		}
		*d = configDuration(p)
	case int64:
		*d = configDuration(time.Duration(v) * time.Second)
	case float64:
		*d = configDuration(v * float64(time.Second))
	default:
		return fmt.Errorf("want a duration such as \"90s\", got %v", v)
	}
	if *d < 0 {
		return errors.New("a timeout cannot be negative")
	}
	return nil
}

// configBuiltinProviders are the providers that need no config.
func configBuiltinProviders(getenv func(string) string) map[string]*providerConfig {
	key := func(s string) *string { return &s }
	return map[string]*providerConfig{
		"anthropic": {Kind: providerKindAnthropic, BaseURL: anthropic.DefaultBaseURL, APIKeyEnv: key("ANTHROPIC_API_KEY")},
		"gemini":    {Kind: providerKindGemini, BaseURL: gemini.DefaultBaseURL, APIKeyEnv: key("GEMINI_API_KEY"), AltKeyEnvs: []string{"GOOGLE_API_KEY"}},
		"openai":    {Kind: providerKindOpenAI, API: provider.APIResponses, BaseURL: openai.DefaultBaseURL, APIKeyEnv: key("OPENAI_API_KEY")},
		"ollama":    {Kind: providerKindOllama, BaseURL: configOllamaBase(getenv("OLLAMA_HOST")), APIKeyEnv: key("")},
		"openrouter": {
			Kind: providerKindOpenAI, BaseURL: "https://openrouter.ai/api/v1", APIKeyEnv: key("OPENROUTER_API_KEY"),
			Headers: map[string]string{"HTTP-Referer": "https://github.com/coda-acp/coda", "X-Title": "coda"},
		},
	}
}

// configOllamaBase is the root of the Ollama at OLLAMA_HOST, which may be
// "host", "host:port" or a URL, as the ollama CLI takes it.
func configOllamaBase(host string) string {
	host = strings.TrimSpace(host)
	if host == "" {
		return ollama.DefaultBaseURL
	}
	scheme := "http"
	if i := strings.Index(host, "://"); i >= 0 {
		scheme, host = host[:i], host[i+3:]
	}
	host = strings.TrimRight(host, "/")
	path := ""
	if i := strings.IndexByte(host, '/'); i >= 0 {
		host, path = host[:i], host[i:]
	}
	if _, _, err := net.SplitHostPort(host); err != nil {
		host = net.JoinHostPort(strings.Trim(host, "[]"), "11434")
	}
	return scheme + "://" + host + path
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
// are errors naming the key.
func loadConfig(path string, getenv func(string) string) (*config, error) {
	c := &config{getenv: getenv, providers: configBuiltinProviders(getenv), cached: map[string]llm.Model{}}
	if path == "" {
		if p := configDefaultPath(getenv); p != "" {
			if _, err := os.Stat(p); err == nil {
				path = p
			}
		}
	}
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("config: %w", err)
		}
		md, err := toml.Decode(string(data), c)
		if err != nil {
			return nil, fmt.Errorf("config %s: %w", path, err)
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
			return nil, fmt.Errorf("config %s: unknown key %s%s", path, k, hint)
		}
		if err := c.check(); err != nil {
			return nil, fmt.Errorf("config %s: %w", path, err)
		}
	}
	for name, p := range c.Providers {
		if b, ok := c.providers[name]; ok {
			p = b.merge(p)
		}
		c.providers[name] = &p
	}
	return c, nil
}

// check validates what the file says, naming the key at fault. c.providers
// still holds the built-in providers alone.
func (c *config) check() error {
	if err := c.checkPrices(); err != nil {
		return err
	}
	if c.MIME.MaxPartBytes < 0 {
		return fmt.Errorf("mime.max_part_bytes = %d: want a positive number of bytes, or leave it out for 10 MiB", c.MIME.MaxPartBytes)
	}
	if c.Taint != nil {
		if err := taint.CheckPolicy(c.Taint.Policy); err != nil {
			return fmt.Errorf("taint.policy: %w", err)
		}
		if err := taint.CheckPrivate(c.Taint.Private); err != nil {
			return fmt.Errorf("taint.private: %w", err)
		}
	}
	if c.DefaultModel != "" {
		if _, _, err := configSplitSpec(c.DefaultModel); err != nil {
			return fmt.Errorf("default_model: %w", err)
		}
	}
	for i, m := range c.Picker.Models {
		if _, _, err := configSplitSpec(m); err != nil {
			return fmt.Errorf("picker.models[%d]: %w", i, err)
		}
	}
	for name, p := range c.Providers {
		key := "providers." + name
		switch {
		case name == "script":
			return fmt.Errorf("[%s]: the name script is reserved for script:PATH models", key)
		case name == "" || strings.ContainsAny(name, ": "):
			return fmt.Errorf("[%s]: a provider name cannot be empty or contain ':' or spaces", key)
		}
		if _, ok := c.providers[name]; !ok && p.Kind == "" {
			return fmt.Errorf("%s.kind is missing: say \"openai\" (OpenAI and what speaks its API: vLLM, llama.cpp, LM Studio, OpenRouter, Ollama's /v1), \"anthropic\", \"gemini\" or \"ollama\" (Ollama's own API)", key)
		}
		if p.Kind != "" && p.Kind != providerKindOpenAI && p.Kind != providerKindAnthropic && p.Kind != providerKindGemini && p.Kind != providerKindOllama {
			return fmt.Errorf("%s.kind = %q: want \"openai\", \"anthropic\", \"gemini\" or \"ollama\"", key, p.Kind)
		}
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
		if p.MaxTokens < 0 || p.ThinkingBudget < 0 || p.NumCtx < 0 || (p.MaxRetries != nil && *p.MaxRetries < 0) {
			return fmt.Errorf("%s: max_tokens, thinking_budget, num_ctx and max_retries cannot be negative", key)
		}
		kind := p.Kind
		if b, ok := c.providers[name]; ok && kind == "" {
			kind = b.Kind
		}
		if p.API != "" && (kind != providerKindOpenAI || p.API != provider.APIChat && p.API != provider.APIResponses) {
			if kind != providerKindOpenAI {
				return fmt.Errorf("%s.api: only a provider of kind \"openai\" takes an api", key)
			}
			return fmt.Errorf("%s.api = %q: want \"chat\" (chat completions, what compatible servers speak) or \"responses\" (OpenAI's Responses API)", key, p.API)
		}
		if p.Server != "" && (kind != providerKindOpenAI || p.Server != provider.ServerVLLM && p.Server != provider.ServerLlamaCpp) {
			if kind != providerKindOpenAI {
				return fmt.Errorf("%s.server: only a provider of kind \"openai\" takes a server", key)
			}
			return fmt.Errorf("%s.server = %q: want \"vllm\" or \"llama.cpp\" (leave it out for any other server)", key, p.Server)
		}
		if p.NumCtx != 0 && kind != providerKindOllama {
			return fmt.Errorf("%s.num_ctx: only a provider of kind \"ollama\" takes num_ctx", key)
		}
		if err := checkEffort(p.Effort); err != nil {
			return fmt.Errorf("%s.effort: %w", key, err)
		}
		if err := outputspec.CheckStructured(p.Structured); err != nil {
			return fmt.Errorf("%s.structured %w", key, err)
		}
		for m, mc := range p.Models {
			if err := outputspec.CheckStructured(mc.Structured); err != nil {
				return fmt.Errorf("%s.models.%q.structured %w", key, m, err)
			}
			if err := checkEffort(mc.Effort); err != nil {
				return fmt.Errorf("%s.models.%q.effort: %w", key, m, err)
			}
			// A model table names its model: the level is checked against
			// it now.
			if takes := effortsTaken(name + ":" + m); mc.Effort != "" && !slices.Contains(takes, mc.Effort) {
				return fmt.Errorf("%s.models.%q.effort = %q: %s takes %s", key, m, mc.Effort, m, strings.Join(takes, ", "))
			}
		}
		if p.Cache != nil && kind != providerKindAnthropic {
			return fmt.Errorf("%s.cache: only a provider of kind \"anthropic\" takes cache (the other APIs cache prompts by themselves)", key)
		}
		for m, n := range p.ContextWindows {
			if n <= 0 {
				return fmt.Errorf("%s.context_windows.%q = %d: want a positive number of tokens", key, m, n)
			}
		}
	}
	return nil
}

// merge returns b with what p sets laid over it.
func (b *providerConfig) merge(p providerConfig) providerConfig {
	out := *b
	if p.Kind != "" {
		out.Kind = p.Kind
	}
	if p.BaseURL != "" {
		out.BaseURL = p.BaseURL
	}
	if p.APIKeyEnv != nil {
		out.APIKeyEnv, out.AltKeyEnvs = p.APIKeyEnv, nil
	}
	if p.Headers != nil {
		h := map[string]string{}
		for k, v := range b.Headers {
			h[k] = v
		}
		for k, v := range p.Headers {
			h[k] = v
		}
		out.Headers = h
	}
	if p.MaxTokens != 0 {
		out.MaxTokens = p.MaxTokens
	}
	if p.ThinkingBudget != 0 {
		out.ThinkingBudget = p.ThinkingBudget
	}
	if p.API != "" {
		out.API = p.API
	}
	if p.Server != "" {
		out.Server = p.Server
	}
	if p.Effort != "" {
		out.Effort = p.Effort
	}
	if p.Cache != nil {
		out.Cache = p.Cache
	}
	if p.NumCtx != 0 {
		out.NumCtx = p.NumCtx
	}
	if p.Timeout != 0 {
		out.Timeout = p.Timeout
	}
	if p.MaxCallTime != 0 {
		out.MaxCallTime = p.MaxCallTime
	}
	if p.MaxRetries != nil {
		out.MaxRetries = p.MaxRetries
	}
	if p.ContextWindows != nil {
		out.ContextWindows = p.ContextWindows
	}
	if p.Tools != nil {
		out.Tools = p.Tools
	}
	if p.Vision != nil {
		out.Vision = p.Vision
	}
	if p.Models != nil {
		out.Models = p.Models
	}
	if p.Structured != "" {
		out.Structured = p.Structured
	}
	return out
}

// models resolves model specs against c.
func (c *config) models() llm.Models { return configModels{c} }

type configModels struct{ c *config }

// Model returns the model for spec ("PROVIDER:MODEL" or "script:PATH"),
// the same one each time for a spec. An unknown provider or a missing key
// is an error wrapping llm.ErrModelUnavailable.
func (m configModels) Model(spec string) (llm.Model, error) {
	c := m.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if model, ok := c.cached[spec]; ok {
		return model, nil
	}
	model, err := c.newModel(spec)
	if err != nil {
		return nil, err
	}
	c.cached[spec] = model
	return model, nil
}

func (c *config) newModel(named string) (llm.Model, error) {
	spec, err := c.resolveSpec(named)
	if err != nil {
		return nil, err
	}
	name, model, err := configSplitSpec(spec)
	if err != nil {
		return nil, configUnavailable{err.Error()}
	}
	if name == "script" {
		return script.Open(model)
	}
	p, key, err := c.resolve(spec, name)
	if err != nil {
		return nil, err
	}
	tries := 0
	if p.MaxRetries != nil {
		tries = *p.MaxRetries + 1
	}
	facts := c.modelFacts(spec)
	entry := catalogEntryFor(name, model)
	opts := provider.Options{
		Name: named, BaseURL: p.BaseURL, APIKey: key, Headers: p.Headers,
		MaxTokens: p.MaxTokens, ThinkingBudget: p.ThinkingBudget,
		Timeout: time.Duration(p.Timeout), MaxCallTime: time.Duration(p.MaxCallTime),
		Retry:         sse.Retry{Tries: tries, Sleep: c.sleep},
		ContextWindow: facts.ContextWindow, Efforts: facts.Efforts, NoVision: !p.sees(name, model),
		// A level this model cannot take (a stage's fallback, a model
		// picked later) is sent as the nearest it takes; the chosen
		// model's was checked at start-up (preflight).
		Effort: nearestEffort(c.effortFor(spec, p, model), effortsTaken(spec)),
		API:    p.API, Server: p.Server, NumCtx: p.NumCtx, Log: c.logger(),
		Thinking: entry.thinking, NoForcedTool: entry.noForcedTool,
		NoCache: p.Cache != nil && !*p.Cache,
	}
	switch {
	case p.Kind == providerKindAnthropic:
		return anthropic.New(model, opts), nil
	case p.Kind == providerKindOllama:
		return ollama.New(model, opts), nil
	case p.Kind == providerKindGemini:
		return gemini.New(model, opts), nil
	case p.API == provider.APIResponses:
		return openai.NewResponses(model, opts), nil
	default:
		return openai.New(model, opts), nil
	}
}

// effort is model's reasoning effort when a request names none: its own
// table's, else its provider's; "" leaves it to the model.
func (p *providerConfig) effort(model string) string {
	if m, ok := p.Models[model]; ok && m.Effort != "" {
		return m.Effort
	}
	return p.Effort
}

// configEfforts are the effort levels the config takes (DESIGN §16): the
// catalog says which of them each model takes.
var configEfforts = []string{llm.EffortOff, llm.EffortMinimal, llm.EffortLow, llm.EffortMedium, llm.EffortHigh, llm.EffortXHigh, llm.EffortMax}

func checkEffort(e string) error {
	if e == "" || slices.Contains(configEfforts, e) {
		return nil
	}
	return fmt.Errorf("%q is not a level: want one of %s", e, strings.Join(configEfforts, ", "))
}

// effortFor is the effort of the model spec names (served by p) when a
// request names none: --effort, else the model's table's, else its
// provider's; "" leaves it to the model.
func (c *config) effortFor(spec string, p *providerConfig, model string) string {
	if c.effort != "" {
		return c.effort
	}
	return p.effort(model)
}

// efforts are the effort levels the model spec names takes and the level
// it is given when a session picks none (acp.Options.Efforts): --effort,
// else its model's or provider's table's, as the nearest it takes.
func (c *config) efforts(spec string) (takes []string, launch string) {
	spec = c.canonical(spec)
	takes = effortsTaken(spec)
	name, model, _ := strings.Cut(spec, ":")
	e := c.effort
	if p := c.providers[name]; p != nil {
		e = c.effortFor(spec, p, model)
	}
	return takes, nearestEffort(e, takes)
}

// setEffort takes --effort's level; "" leaves the config's.
func (c *config) setEffort(e string) error {
	if err := checkEffort(e); err != nil {
		return usageError("--effort: %v", err)
	}
	c.effort = e
	return nil
}

// errEffort is a level a model cannot take: start-up stops on it, whatever
// other model a stage could fall back to. effortError is it.
var errEffort = errors.New("effort not taken")

type effortError struct{ msg string }

func (e effortError) Error() string        { return e.msg }
func (e effortError) Is(target error) bool { return target == errEffort }

// effortTaken checks that the model spec names (served by p) takes the
// effort it is given: the catalog's levels, or the basic four for a model
// it does not know. The error is one line naming the levels it takes.
func (c *config) effortTaken(spec string, p *providerConfig, model string) error {
	e := c.effortFor(spec, p, model)
	takes := effortsTaken(spec)
	if e == "" || slices.Contains(takes, e) {
		return nil
	}
	from := "--effort"
	switch {
	case c.effort != "":
	case p.Models[model].Effort != "":
		from = fmt.Sprintf("the config's [providers.%s.models.%q] effort", strings.SplitN(spec, ":", 2)[0], model)
	default:
		from = fmt.Sprintf("the config's [providers.%s] effort", strings.SplitN(spec, ":", 2)[0])
	}
	if len(takes) == 1 && takes[0] == effOff {
		return effortError{fmt.Sprintf("%s %s: model %s does not reason: it takes no effort but off", from, e, spec)}
	}
	return effortError{fmt.Sprintf("%s %s: model %s takes %s", from, e, spec, strings.Join(takes, ", "))}
}

// logger is where the providers' warnings go: the launch's log, once set.
func (c *config) logger() *slog.Logger {
	if c.log != nil {
		return c.log
	}
	return slog.New(slog.DiscardHandler)
}

// resolve finds spec's provider and reads its key from the environment.
func (c *config) resolve(spec, name string) (*providerConfig, string, error) {
	p, ok := c.providers[name]
	if !ok {
		known := make([]string, 0, len(c.providers))
		for n := range c.providers {
			known = append(known, n)
		}
		slices.Sort(known)
		if name == "google" {
			return nil, "", configUnavailable{fmt.Sprintf("model %s: unknown provider %q: Leviath's google is coda's gemini: gemini:%s", spec, name, strings.TrimPrefix(spec, "google:"))}
		}
		if hint := leviathProviders[name]; hint != "" {
			return nil, "", configUnavailable{fmt.Sprintf("model %s: unknown provider %q: %s", spec, name, hint)}
		}
		return nil, "", configUnavailable{fmt.Sprintf("model %s: unknown provider %q: use one of %s, script, or add [providers.%s] to the config file",
			spec, name, strings.Join(known, ", "), name)}
	}
	env := ""
	if p.APIKeyEnv != nil {
		env = *p.APIKeyEnv
	}
	if env == "" {
		return p, "", nil
	}
	key := strings.TrimSpace(c.getenv(env))
	for _, alt := range p.AltKeyEnvs {
		if key == "" {
			key = strings.TrimSpace(c.getenv(alt))
		}
	}
	if key == "" {
		if len(p.AltKeyEnvs) > 0 {
			env += " (or " + strings.Join(p.AltKeyEnvs, ", ") + ")"
		}
		return nil, "", missingKey{configUnavailable{fmt.Sprintf("model %s needs %s: set it in the environment (or api_key_env in [providers.%s])", spec, env, name)}, spec, env}
	}
	return p, key, nil
}

// preflight checks, before any token is spent, that every spec names a
// known provider whose key is set (or a script file that exists). The error
// is one line saying what to do.
func (c *config) preflight(specs []string) error {
	for _, spec := range specs {
		spec, err := c.resolveSpec(spec)
		if err != nil {
			return err
		}
		name, model, err := configSplitSpec(spec)
		if err != nil {
			return err
		}
		if name == "script" {
			if _, err := os.Stat(model); err != nil {
				return fmt.Errorf("model %s: %w", spec, err)
			}
			continue
		}
		p, _, err := c.resolve(spec, name)
		if err != nil {
			return err
		}
		if err := c.effortTaken(spec, p, model); err != nil {
			return err
		}
	}
	return nil
}

// served says why no provider of the config serves spec, as preflight
// would refuse it, or "" when one does; a missing key is the environment's
// business, not the blueprint's (`coda validate`).
func (c *config) served(spec string) string {
	spec, err := c.resolveSpec(spec)
	if err != nil {
		return err.Error()
	}
	name, _, err := configSplitSpec(spec)
	switch {
	case err != nil:
		return err.Error()
	case name == "script":
		return ""
	}
	var mk missingKey
	if _, _, err := c.resolve(spec, name); err != nil && !errors.As(err, &mk) {
		return err.Error()
	}
	return ""
}

// configSplitSpec splits "PROVIDER:MODEL" at the first colon, so that
// "ollama:llama3.1:8b" names Ollama's "llama3.1:8b".
func configSplitSpec(spec string) (provider, model string, err error) {
	provider, model, ok := strings.Cut(spec, ":")
	if !ok || provider == "" || model == "" {
		return "", "", fmt.Errorf("model %q: want PROVIDER:MODEL, e.g. %s, ollama:llama3.1 or script:PATH", spec, currentModels())
	}
	return provider, model, nil
}

// configUnavailable is a model that cannot be had: the stage tries its next
// one.
type configUnavailable struct{ msg string }

func (e configUnavailable) Error() string { return e.msg }
func (e configUnavailable) Unwrap() error { return llm.ErrModelUnavailable }

// missingKey is a model whose API key is not in the environment: when
// serving, coda starts anyway and asks for it (auth.go).
type missingKey struct {
	configUnavailable
	spec, env string // the model, and the variable (or variables) it needs
}

// Hint says in a user's words what to set (acp's auth method).
func (e missingKey) Hint() string {
	return fmt.Sprintf("Set %s in the environment coda starts with (the API key of %s, the model coda is set to use), then restart the agent; or start coda with --model naming a model whose key is set (%s).",
		e.env, e.spec, keysText())
}
