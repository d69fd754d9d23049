// Package catalog is coda's one model catalog (DESIGN §16, §25): built
// once from the decoded config.toml, it answers which provider serves a
// model spec (bare ids, vendor/model, PROVIDER:MODEL), what is known of the
// model (window, tools, vision, efforts, how it thinks), which efforts it
// takes and which it is given, whether it can be reached (its key is in
// the environment), the default model, and the picker's list: the
// config's [picker] models and what the keyed providers list.
//
// cmd/coda builds it and builds the models from what it answers (only
// cmd/coda picks providers); acp asks it through an interface of its own
// (acp.Models), so neither acp nor the engine imports this package.
package catalog

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/internal/prices"
)

// Options are what a Catalog is built from: the decoded config and the
// launch.
type Options struct {
	// Providers are config.toml's [providers.NAME], each laid over the
	// built-in provider of its name, if any.
	Providers map[string]Provider
	// Default is default_model; Picker, [picker] models; NoDiscover,
	// [picker] discover = false.
	Default    string
	Picker     []string
	NoDiscover bool
	// Getenv reads the providers' keys (and OLLAMA_HOST).
	Getenv func(string) string
	// Prices are [models."PROVIDER:MODEL"] price, by spec as written: over
	// the table's (prices.go).
	Prices map[string]prices.Price
}

// A Catalog answers what coda knows of models under one config. Its
// methods are safe for concurrent use.
type Catalog struct {
	getenv    func(string) string
	providers map[string]*Provider // built-ins merged with the file's
	named     map[string]bool      // the providers the file has a table for
	def       string
	picker    []string
	discover  bool
	// effort is --effort, every model's level over the file's; log where
	// the providers' warnings go (SetEffort, SetLog: the launch's).
	effort string
	log    *slog.Logger
	// listedWindows are the windows the providers' listings gave, by spec
	// (discover.go).
	listedMu      sync.Mutex
	listedWindows map[string]int
	// finder looks for a local Ollama to default to (default.go).
	finder *finder
	// lister makes a provider's lister; tests put their own in.
	lister newLister
	// prices are Options.Prices (prices.go).
	prices map[string]prices.Price
}

// New builds the catalog of a config.
func New(o Options) *Catalog {
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	c := &Catalog{getenv: getenv, providers: Builtins(getenv), named: map[string]bool{}, def: o.Default, picker: o.Picker, discover: !o.NoDiscover, prices: o.Prices}
	for name, p := range o.Providers {
		if b, ok := c.providers[name]; ok {
			p = b.merge(p)
		}
		c.providers[name] = &p
		c.named[name] = true
	}
	return c
}

// Provider is the provider of that name, built-in or configured; nil when
// there is none.
func (c *Catalog) Provider(name string) *Provider { return c.providers[name] }

// SetLog sets where the providers' warnings go.
func (c *Catalog) SetLog(log *slog.Logger) { c.log = log }

// Log is where the providers' warnings go: the launch's log, once set.
func (c *Catalog) Log() *slog.Logger {
	if c.log != nil {
		return c.log
	}
	return slog.New(slog.DiscardHandler)
}

// Picker is [picker] models: more choices for the editor's model picker.
func (c *Catalog) Picker() []string { return c.picker }

// Levels are the effort levels the config takes (DESIGN §16): the table
// says which of them each model takes.
var Levels = []string{llm.EffortOff, llm.EffortMinimal, llm.EffortLow, llm.EffortMedium, llm.EffortHigh, llm.EffortXHigh, llm.EffortMax}

// CheckLevel refuses what is not an effort level; "" is none.
func CheckLevel(e string) error {
	if e == "" || slices.Contains(Levels, e) {
		return nil
	}
	return fmt.Errorf("%q is not a level: want one of %s", e, strings.Join(Levels, ", "))
}

// SetEffort takes --effort's level; "" leaves the config's.
func (c *Catalog) SetEffort(e string) error {
	if err := CheckLevel(e); err != nil {
		return err
	}
	c.effort = e
	return nil
}

// Effort is --effort's level; "" when it was not given.
func (c *Catalog) Effort() string { return c.effort }

// SplitSpec splits "PROVIDER:MODEL" at the first colon, so that
// "ollama:llama3.1:8b" names Ollama's "llama3.1:8b".
func SplitSpec(spec string) (provider, model string, err error) {
	provider, model, ok := strings.Cut(spec, ":")
	if !ok || provider == "" || model == "" {
		return "", "", fmt.Errorf("model %q: want PROVIDER:MODEL, e.g. %s, ollama:llama3.1 or script:PATH", spec, CurrentModels())
	}
	return provider, model, nil
}

// Facts is what is known of the model spec names: the table, with the
// config over it. A provider's context_windows gives a model's size, its
// structured (or its model table's) how answers are asked of it;
// tools = false on the provider, or on the model ([providers.NAME.models.
// "MODEL"], which wins either way), says it cannot call tools, and
// tools = true says it can, whatever the table thinks.
func (c *Catalog) Facts(spec string) llm.ModelFact {
	spec = c.Canonical(spec)
	f := Fact(spec)
	f.Price = c.price(spec)
	name, model, ok := strings.Cut(spec, ":")
	p := c.providers[name]
	if !ok || p == nil {
		return f
	}
	if f.ContextWindow == 0 {
		f.ContextWindow = c.listedWindow(spec)
	}
	if n, ok := p.ContextWindows[model]; ok {
		f.ContextWindow = n
	}
	key := "providers." + name
	tools := p.Tools
	if m, ok := p.Models[model]; ok && m.Tools != nil {
		key, tools = fmt.Sprintf("providers.%s.models.%q", name, model), m.Tools
	}
	switch {
	case tools == nil:
	case *tools:
		f.NoTools = ""
	default:
		f.NoTools = fmt.Sprintf("the config says so: [%s] tools = false", key)
	}
	f.Structured = p.Structured
	if m, ok := p.Models[model]; ok && m.Structured != "" {
		f.Structured = m.Structured
	}
	return f
}

// effortFor is the effort of model (served by p) when a request names
// none: --effort, else the model's table's, else its provider's; "" leaves
// it to the model.
func (c *Catalog) effortFor(p *Provider, model string) string {
	if c.effort != "" {
		return c.effort
	}
	return p.effort(model)
}

// Efforts are the effort levels the model spec names takes and the level
// it is given when a session picks none: --effort, else its model's or
// provider's table's, as the nearest it takes.
func (c *Catalog) Efforts(spec string) (takes []string, launch string) {
	spec = c.Canonical(spec)
	takes = EffortsTaken(spec)
	name, model, _ := strings.Cut(spec, ":")
	e := c.effort
	if p := c.providers[name]; p != nil {
		e = c.effortFor(p, model)
	}
	return takes, llm.NearestEffort(e, takes)
}

// Takes are the effort levels the model spec names takes (EffortsTaken,
// its name resolved first).
func (c *Catalog) Takes(spec string) []string { return EffortsTaken(c.Canonical(spec)) }

// checkEffort checks that model (served by p) takes the effort it is
// given: the table's levels, or the basic four for a model it does not
// know. The error is one line naming the levels it takes.
func (c *Catalog) checkEffort(spec string, p *Provider, model string) error {
	e := c.effortFor(p, model)
	takes := EffortsTaken(spec)
	if e == "" || slices.Contains(takes, e) {
		return nil
	}
	from := "--effort"
	name, _, _ := strings.Cut(spec, ":")
	switch {
	case c.effort != "":
	case p.Models[model].Effort != "":
		from = fmt.Sprintf("the config's [providers.%s.models.%q] effort", name, model)
	default:
		from = fmt.Sprintf("the config's [providers.%s] effort", name)
	}
	return NotTaken(from+" "+e, spec, takes)
}

// NotTaken is the error of a level (what says it, and the level) that the
// model spec names cannot take, given what it takes.
func NotTaken(what, spec string, takes []string) error {
	if slices.Equal(takes, []string{llm.EffortOff}) {
		return EffortError{fmt.Sprintf("%s: model %s does not reason: it takes no effort but off", what, spec)}
	}
	return EffortError{fmt.Sprintf("%s: model %s takes %s", what, spec, strings.Join(takes, ", "))}
}

// A Resolved is a model spec as served: the provider that serves it, its
// key, and what coda sends it (cmd/coda builds the model from it).
type Resolved struct {
	Spec, Name, Model string // PROVIDER:MODEL and its two parts
	Provider          *Provider
	Key               string
	Facts             llm.ModelFact
	// Effort is the level the model is sent when a request names none,
	// the nearest it takes; Sees whether it takes images.
	Effort string
	Sees   bool
	// Thinking is how it takes an effort (anthropic.Thinking*,
	// gemini.Thinking*); NoForcedTool that it refuses a forced tool.
	Thinking     string
	NoForcedTool bool
}

// Serve is the model the spec names, resolved to the provider that
// serves it with that provider's key; a script:PATH spec is Name "script"
// and Model the path. An unknown provider or a missing key is an error
// wrapping llm.ErrModelUnavailable (a MissingKey for the key).
func (c *Catalog) Serve(named string) (*Resolved, error) {
	spec, err := c.Resolve(named)
	if err != nil {
		return nil, err
	}
	name, model, err := SplitSpec(spec)
	if err != nil {
		return nil, Unavailable{err.Error()}
	}
	if name == "script" {
		return &Resolved{Spec: spec, Name: name, Model: model}, nil
	}
	p, key, err := c.reach(spec, name)
	if err != nil {
		return nil, err
	}
	e := entryFor(name, model)
	return &Resolved{
		Spec: spec, Name: name, Model: model, Provider: p, Key: key, Facts: c.Facts(spec),
		// A level this model cannot take (a stage's fallback, a model
		// picked later) is sent as the nearest it takes; the chosen
		// model's was checked at start-up (Check).
		Effort: llm.NearestEffort(c.effortFor(p, model), EffortsTaken(spec)),
		Sees:   p.Sees(name, model), Thinking: e.thinking, NoForcedTool: e.noForcedTool,
	}, nil
}

// reach finds spec's provider and reads its key from the environment.
func (c *Catalog) reach(spec, name string) (*Provider, string, error) {
	p, ok := c.providers[name]
	if !ok {
		return nil, "", c.unknownProvider(spec, name)
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
		return nil, "", MissingKey{Unavailable{fmt.Sprintf("model %s needs %s: set it in the environment (or api_key_env in [providers.%s])", spec, env, name)}, spec, env}
	}
	return p, key, nil
}

// unknownProvider says that no provider is named name, and what to do.
func (c *Catalog) unknownProvider(spec, name string) error {
	known := c.Names()
	if name == "google" {
		return Unavailable{fmt.Sprintf("model %s: unknown provider %q: Leviath's google is coda's gemini: gemini:%s", spec, name, strings.TrimPrefix(spec, "google:"))}
	}
	if hint := leviathProviders[name]; hint != "" {
		return Unavailable{fmt.Sprintf("model %s: unknown provider %q: %s", spec, name, hint)}
	}
	return Unavailable{fmt.Sprintf("model %s: unknown provider %q: use one of %s, script, or add [providers.%s] to the config file",
		spec, name, strings.Join(known, ", "), name)}
}

// Check says, before any token is spent, whether every spec can be used:
// it names a known provider whose key is set (or a script file that
// exists), and that model takes the effort it is given. The error is one
// line saying what to do; a missing key is a MissingKey, a level the
// model cannot take an EffortError.
func (c *Catalog) Check(specs ...string) error {
	for _, spec := range specs {
		spec, err := c.Resolve(spec)
		if err != nil {
			return err
		}
		name, model, err := SplitSpec(spec)
		if err != nil {
			return err
		}
		if name == "script" {
			if _, err := os.Stat(model); err != nil {
				return fmt.Errorf("model %s: %w", spec, err)
			}
			continue
		}
		p, _, err := c.reach(spec, name)
		if err != nil {
			return err
		}
		if err := c.checkEffort(spec, p, model); err != nil {
			return err
		}
	}
	return nil
}

// Served says why no provider of the config serves spec, as Check would
// refuse it, or "" when one does; a missing key is the environment's
// business, not the blueprint's (`coda validate`).
func (c *Catalog) Served(spec string) string {
	spec, err := c.Resolve(spec)
	if err != nil {
		return err.Error()
	}
	name, _, err := SplitSpec(spec)
	switch {
	case err != nil:
		return err.Error()
	case name == "script":
		return ""
	}
	if _, _, err := c.reach(spec, name); err != nil && !errors.As(err, new(MissingKey)) {
		return err.Error()
	}
	return ""
}

// Unavailable is a model that cannot be had: the stage tries its next
// one.
type Unavailable struct{ msg string }

func (e Unavailable) Error() string { return e.msg }
func (e Unavailable) Unwrap() error { return llm.ErrModelUnavailable }

// MissingKey is a model whose API key is not in the environment: when
// serving, coda starts anyway and asks for it.
type MissingKey struct {
	Unavailable
	spec, env string // the model, and the variable (or variables) it needs
}

// Hint says in a user's words what to set (acp's auth method).
func (e MissingKey) Hint() string {
	return fmt.Sprintf("Set %s in the environment coda starts with (the API key of %s, the model coda is set to use), then restart the agent; or start coda with --model naming a model whose key is set (%s).",
		e.env, e.spec, KeysText())
}

// ErrEffort is a level a model cannot take: start-up stops on it, whatever
// other model a stage could fall back to. EffortError is it.
var ErrEffort = errors.New("effort not taken")

// EffortError is a level a model cannot take, in one line.
type EffortError struct{ msg string }

func (e EffortError) Error() string        { return e.msg }
func (e EffortError) Is(target error) bool { return target == ErrEffort }

// KeysText names every built-in provider's key, as a user reads them.
func KeysText() string {
	return "ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY or GOOGLE_API_KEY, OPENROUTER_API_KEY"
}

// Names are the providers' names, built-in and configured, sorted.
func (c *Catalog) Names() []string {
	names := make([]string, 0, len(c.providers))
	for n := range c.providers {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
