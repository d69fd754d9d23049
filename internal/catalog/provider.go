package catalog

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"strings"
	"time"

	"github.com/coda-acp/coda/engine/provider"
	"github.com/coda-acp/coda/engine/provider/anthropic"
	"github.com/coda-acp/coda/engine/provider/gemini"
	"github.com/coda-acp/coda/engine/provider/ollama"
	"github.com/coda-acp/coda/engine/provider/openai"
)

// A Provider is one [providers.NAME] table of config.toml, as decoded: the
// config file's types are the catalog's, so that what is decoded is what
// the catalog answers from.
type Provider struct {
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
	Timeout        Duration       `toml:"timeout"`
	MaxCallTime    Duration       `toml:"max_call_time"`
	MaxRetries     *int           `toml:"max_retries"`
	ContextWindows map[string]int `toml:"context_windows"`
	// Tools = false: the provider's models cannot call tools (DESIGN §15);
	// Vision = false: they cannot see images. Models holds one model's own
	// facts, which win (Catalog.Facts and Sees).
	Tools  *bool            `toml:"tools"`
	Vision *bool            `toml:"vision"`
	Models map[string]Model `toml:"models"`
	// Structured is the strongest mechanism an answer is asked through
	// (DESIGN §17: outputspec.Structured*): a server known to refuse
	// strict schemas or a forced tool is set "native" or "prompted".
	Structured string `toml:"structured"`

	// AltKeyEnvs are the variables a built-in provider also reads its key
	// from when APIKeyEnv's is unset (Gemini's GOOGLE_API_KEY); setting
	// api_key_env drops them.
	AltKeyEnvs []string `toml:"-"`
}

// A Model is one [providers.NAME.models."MODEL"] table: what is known of
// one model of the provider, over what the provider's table says.
type Model struct {
	Tools      *bool  `toml:"tools"`
	Vision     *bool  `toml:"vision"`
	Effort     string `toml:"effort"`
	Structured string `toml:"structured"`
}

// The provider kinds: the API each speaks.
const (
	KindOpenAI    = "openai"
	KindAnthropic = "anthropic"
	KindOllama    = "ollama" // Ollama's own /api/chat; its /v1 is kind "openai"
	KindGemini    = "gemini"
)

// Duration is a duration written as "90s" / "2m", or as seconds.
type Duration time.Duration

func (d *Duration) UnmarshalTOML(v any) error {
	switch v := v.(type) {
	case string:
		p, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("%q is not a duration (write e.g. \"90s\" or \"2m\")", v)
		}
		*d = Duration(p)
	case int64:
		*d = Duration(time.Duration(v) * time.Second)
	case float64:
		*d = Duration(v * float64(time.Second))
	default:
		return fmt.Errorf("want a duration such as \"90s\", got %v", v)
	}
	if *d < 0 {
		return errors.New("a timeout cannot be negative")
	}
	return nil
}

// Builtins are the providers that need no config.
func Builtins(getenv func(string) string) map[string]*Provider {
	key := func(s string) *string { return &s }
	return map[string]*Provider{
		"anthropic": {Kind: KindAnthropic, BaseURL: anthropic.DefaultBaseURL, APIKeyEnv: key("ANTHROPIC_API_KEY")},
		"gemini":    {Kind: KindGemini, BaseURL: gemini.DefaultBaseURL, APIKeyEnv: key("GEMINI_API_KEY"), AltKeyEnvs: []string{"GOOGLE_API_KEY"}},
		"openai":    {Kind: KindOpenAI, API: provider.APIResponses, BaseURL: openai.DefaultBaseURL, APIKeyEnv: key("OPENAI_API_KEY")},
		"ollama":    {Kind: KindOllama, BaseURL: OllamaBase(getenv("OLLAMA_HOST")), APIKeyEnv: key("")},
		"openrouter": {
			Kind: KindOpenAI, BaseURL: "https://openrouter.ai/api/v1", APIKeyEnv: key("OPENROUTER_API_KEY"),
			Headers: map[string]string{"HTTP-Referer": "https://github.com/coda-acp/coda", "X-Title": "coda"},
		},
	}
}

// OllamaBase is the root of the Ollama at OLLAMA_HOST, which may be
// "host", "host:port" or a URL, as the ollama CLI takes it.
func OllamaBase(host string) string {
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

// merge returns b with what p sets laid over it.
func (b *Provider) merge(p Provider) Provider {
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
		h := maps.Clone(b.Headers)
		if h == nil {
			h = map[string]string{}
		}
		maps.Copy(h, p.Headers)
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

// effort is model's reasoning effort when a request names none: its own
// table's, else its provider's; "" leaves it to the model.
func (p *Provider) effort(model string) string {
	if m, ok := p.Models[model]; ok && m.Effort != "" {
		return m.Effort
	}
	return p.Effort
}

// Sees reports whether model, served by the provider named name (p),
// takes images: the model's own vision setting, else the provider's,
// else the catalog's (text-only models are marked), else yes.
func (p *Provider) Sees(name, model string) bool {
	if m, ok := p.Models[model]; ok && m.Vision != nil {
		return *m.Vision
	}
	if p.Vision != nil {
		return *p.Vision
	}
	return !entryFor(name, model).noVision
}
