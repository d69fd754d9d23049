package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/coda-acp/coda/acp"
)

// Which model coda uses when none is configured, and what serving without
// one needs. With no --model and no default_model, the default is the
// first provider whose key is in the environment (envDefaults), else a
// local Ollama that answers; when serving, that Ollama is looked for in
// the background, so initialize is not held up by it.

// envDefaults are the providers tried for a default, in order, each with
// the model it defaults to.
// The models are each vendor's current general model (models.go,
// defaultModels).
var envDefaults = []struct{ env, spec string }{
	{"ANTHROPIC_API_KEY", "anthropic:" + defaultModels["anthropic"]},
	{"OPENAI_API_KEY", "openai:" + defaultModels["openai"]},
	{"GEMINI_API_KEY", "gemini:" + defaultModels["gemini"]},
	{"GOOGLE_API_KEY", "gemini:" + defaultModels["gemini"]},
	{"OPENROUTER_API_KEY", "openrouter:" + defaultModels["openrouter"]},
}

// envDefault is the default model of the first provider whose key is set;
// "" when none is.
func envDefault(getenv func(string) string) string {
	for _, d := range envDefaults {
		if strings.TrimSpace(getenv(d.env)) != "" {
			return d.spec
		}
	}
	return ""
}

// errNoModel is a stage without any model to try (noModelError is it).
var errNoModel = errors.New("no model")

// noModelError says what to do when a stage has no model at all: in a
// user's words, what to set (a key, --model, default_model), and which
// stage only when the agent has more than one to tell apart.
type noModelError struct {
	stage  string
	stages int // how many the agent has
}

func (e noModelError) Error() string {
	which := ""
	if e.stages > 1 {
		which = fmt.Sprintf(" (the agent's stage %s names none)", e.stage)
	}
	return fmt.Sprintf("no model to use%s: set an API key in the environment (%s), or pass --model PROVIDER:MODEL (for example --model anthropic:%s, or --model ollama:MODEL for a local Ollama), or set default_model in the config file",
		which, keysText(), defaultModels["anthropic"])
}

func (e noModelError) Is(target error) bool { return target == errNoModel }

// Hint says in a user's words what to set (acp's auth method).
func (e noModelError) Hint() string {
	return fmt.Sprintf("No model is set up. Set an API key in the environment coda starts with (%s), or start coda with --model PROVIDER:MODEL (for example --model anthropic:%s, or --model ollama:MODEL for a local Ollama), then restart the agent.",
		keysText(), defaultModels["anthropic"])
}

// keysText names every built-in provider's key, as a user reads them.
func keysText() string {
	return "ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY or GOOGLE_API_KEY, OPENROUTER_API_KEY"
}

// servable reports whether a model problem lets coda serve anyway: a key
// or a model the user can still supply, not a wrong spec.
func servable(err error) bool {
	var mk missingKey
	return errors.As(err, &mk) || errors.Is(err, errNoModel)
}

// authError marks a missing key as ACP's authentication required, for the
// model picker (acp.Options.CheckModel).
func authError(err error) error {
	var mk missingKey
	if errors.As(err, &mk) {
		return fmt.Errorf("%w: %v", acp.ErrAuthRequired, err)
	}
	return err
}

// ollamaProbeTimeout bounds the look for a local Ollama: one that answers
// at all answers at once.
const ollamaProbeTimeout = 1500 * time.Millisecond

// probeOllama asks the Ollama whose OpenAI-compatible endpoint is base
// (".../v1") which models it has, and picks one: the first that can call
// tools (modelCatalog), else the first that chats at all.
func probeOllama(ctx context.Context, base string) (string, error) {
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
		fact := catalogFact("ollama", m.Name)
		switch {
		case m.Name == "" || strings.Contains(strings.ToLower(m.Name), "embed") || strings.Contains(m.Details.Family, "bert"):
			// Embedding models (BERT's family among them) do not chat.
		case fact.NoTools == "":
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

// defaultFinder looks for a default model in the background.
type defaultFinder struct {
	done chan struct{}
	spec string // set before done is closed
}

func startFinder(find func() string) *defaultFinder {
	f := &defaultFinder{done: make(chan struct{})}
	go func() {
		defer close(f.done)
		f.spec = find()
	}()
	return f
}

// find is acp.Options.FindDefault: what was found, waiting for the look
// to end when wait is set.
func (f *defaultFinder) find(wait bool) string {
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
