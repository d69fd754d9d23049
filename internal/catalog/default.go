package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Which model coda uses when none is configured. With no --model and no
// default_model, the default is the first provider whose key is in the
// environment (envDefaults), else a local Ollama that answers; when
// serving, that Ollama is looked for in the background (Search), so
// initialize is not held up by it.

// DefaultModel is the model the built-in provider defaults to, its
// vendor's current one (defaultModels).
func DefaultModel(provider string) string { return defaultModels[provider] }

// envDefaults are the providers tried for a default, in order, each with
// the model it defaults to: each vendor's current general model.
var envDefaults = []struct{ env, spec string }{
	{"ANTHROPIC_API_KEY", "anthropic:" + defaultModels["anthropic"]},
	{"OPENAI_API_KEY", "openai:" + defaultModels["openai"]},
	{"GEMINI_API_KEY", "gemini:" + defaultModels["gemini"]},
	{"GOOGLE_API_KEY", "gemini:" + defaultModels["gemini"]},
	{"OPENROUTER_API_KEY", "openrouter:" + defaultModels["openrouter"]},
}

// EnvDefault is the default model of the first provider whose key is set;
// "" when none is.
func EnvDefault(getenv func(string) string) string {
	for _, d := range envDefaults {
		if strings.TrimSpace(getenv(d.env)) != "" {
			return d.spec
		}
	}
	return ""
}

// SetDefault makes spec the default model: the environment's
// (EnvDefault) or a local Ollama found at once, where the config names
// none.
func (c *Catalog) SetDefault(spec string) { c.def = spec }

// Default is the model for stages that name none: default_model (or what
// SetDefault set), else what Search found. With wait false it does not
// wait for a search still under way ("" meanwhile).
func (c *Catalog) Default(wait bool) string {
	if c.def != "" || c.finder == nil {
		return c.def
	}
	return c.finder.find(wait)
}

// Search starts looking for a local Ollama to default to, in the
// background: Default answers it once found.
func (c *Catalog) Search() {
	c.finder = startFinder(func() string { return c.FindOllama(context.Background()) })
}

// FindOllama is a model of the local Ollama that answers, "" when none
// does (logged at debug level).
func (c *Catalog) FindOllama(ctx context.Context) string {
	spec, err := ProbeOllama(ctx, c.providers["ollama"].BaseURL)
	if err != nil {
		c.Log().Debug("no local Ollama to default to", "err", err)
	}
	return spec
}

// ollamaProbeTimeout bounds the look for a local Ollama: one that answers
// at all answers at once.
const ollamaProbeTimeout = 1500 * time.Millisecond

// ProbeOllama asks the Ollama whose OpenAI-compatible endpoint is base
// (".../v1") which models it has, and picks one: the first that can call
// tools (the table), else the first that chats at all.
func ProbeOllama(ctx context.Context, base string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, ollamaProbeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(strings.TrimRight(base, "/"), "/v1")+"/api/tags", nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("ollama answered %s", resp.Status)
	}
	var tags struct {
		Models []struct {
			Name    string `json:"name"`
			Details struct {
				Family string `json:"family"`
			} `json:"details"`
		} `json:"models"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 4<<20)).Decode(&tags); err != nil {
		return "", fmt.Errorf("ollama's model list: %w", err)
	}
	first := ""
	for _, m := range tags.Models {
		f := fact("ollama", m.Name)
		switch {
		case m.Name == "" || strings.Contains(strings.ToLower(m.Name), "embed") || strings.Contains(m.Details.Family, "bert"):
			// Embedding models (BERT's family among them) do not chat.
		case f.NoTools == "":
			return "ollama:" + m.Name, nil
		case first == "":
			first = "ollama:" + m.Name
		}
	}
	if first == "" {
		return "", errors.New("ollama has no chat model (ollama pull one)")
	}
	return first, nil
}

// finder looks for a default model in the background.
type finder struct {
	done chan struct{}
	spec string // set before done is closed
}

func startFinder(find func() string) *finder {
	f := &finder{done: make(chan struct{})}
	go func() {
		defer close(f.done)
		f.spec = find()
	}()
	return f
}

// find is what was found, waiting for the look to end when wait is set.
func (f *finder) find(wait bool) string {
	if wait {
		<-f.done
		return f.spec
	}
	select {
	case <-f.done:
		return f.spec
	default:
		return ""
	}
}
