package catalog

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"

	"github.com/BurntSushi/toml"

	"github.com/coda-acp/coda/engine/provider"
	"github.com/coda-acp/coda/engine/provider/anthropic/anthropictest"
	"github.com/coda-acp/coda/engine/provider/gemini/geminitest"
	"github.com/coda-acp/coda/engine/provider/ollama/ollamatest"
	"github.com/coda-acp/coda/engine/provider/openai/openaitest"
)

// The live list asks each provider with a key, and each keyless one the
// config names, through its own listing endpoint (each fake's): embedding
// models are left out, tool-less ones marked, by the listing or the
// catalog; a window a listing gives is learnt where the catalog knows
// none; a provider without its key, and the built-in Ollama nobody named,
// are not asked.
func TestDiscover(t *testing.T) {
	a := anthropictest.NewServer()
	t.Cleanup(a.Close)
	a.Listed = []anthropictest.ListedModel{{ID: "claude-opus-4-7", MaxInputTokens: 1_000_000}}
	g := geminitest.NewServer()
	t.Cleanup(g.Close)
	g.Listed = []geminitest.ListedModel{{ID: "gemini-3-pro-preview"}, {ID: "text-embedding-004", Methods: []string{"embedContent"}}}
	o := openaitest.NewServer()
	t.Cleanup(o.Close)
	no := false
	o.Models = []openaitest.Model{{ID: "gpt-5.5"}, {ID: "text-embedding-3-small"}, {ID: "tiny", ContextLength: 32768, Tools: &no}, {ID: "o1-mini"}}
	l := ollamatest.NewServer(ollamatest.Model{Name: "qwen3:8b", Arch: "qwen3"}, ollamatest.Model{Name: "nomic-embed-text", Arch: "nomic-bert"})
	t.Cleanup(l.Close)

	cfg, err := testCatalog(fmt.Sprintf(`
[providers.anthropic]
base_url = %q
[providers.gemini]
base_url = %q
[providers.lab]
kind = "openai"
base_url = %q
[providers.box]
kind = "ollama"
base_url = %q
`, a.URL, g.URL, o.URL, l.URL), testEnv(map[string]string{"ANTHROPIC_API_KEY": "k1", "GEMINI_API_KEY": "k2", "OLLAMA_HOST": "127.0.0.1:1"}))
	if err != nil {
		t.Fatal(err)
	}
	got := cfg.Discover(context.Background(), "anthropic:claude-opus-4-7")
	want := []Listed{
		{Spec: "anthropic:claude-opus-4-7", Name: "anthropic:claude-opus-4-7"},
		{Spec: "box:qwen3:8b", Name: "box:qwen3:8b"},
		{Spec: "gemini:gemini-3-pro-preview", Name: "gemini:gemini-3-pro-preview"},
		{Spec: "lab:gpt-5.5", Name: "lab:gpt-5.5"},
		{Spec: "lab:tiny", Name: "lab:tiny (no tools)"},
		{Spec: "lab:o1-mini", Name: "lab:o1-mini (no tools)"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("discover =\n%v\nwant\n%v", got, want)
	}
	if w := cfg.Facts("lab:tiny").ContextWindow; w != 32768 {
		t.Errorf("lab:tiny's window = %d, want the listing's 32768", w)
	}
	if w := cfg.Facts("lab:gpt-5.5").ContextWindow; w != 1_050_000 {
		t.Errorf("lab:gpt-5.5's window = %d, want the catalog's", w)
	}
}

// The built-in Ollama, which takes no key, is asked when the launch's
// model is one of its own.
func TestDiscover_launchProvider(t *testing.T) {
	cfg, err := testCatalog("", testEnv(map[string]string{"OLLAMA_HOST": "127.0.0.1:1"}))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		launch string
		want   []string
	}{{"ollama:qwen3", []string{"ollama"}}, {"anthropic:claude-opus-4-7", nil}} {
		names, _ := cfg.listable(tt.launch)
		if !slices.Equal(names, tt.want) {
			t.Errorf("launch %s: listed %v, want %v", tt.launch, names, tt.want)
		}
	}
}

// A provider that never answers is given provider.ListTimeout, and the
// others' models still come; the whole list is cut at provider.MaxListed.
func TestDiscover_bounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg, err := testCatalog("", testEnv(map[string]string{"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k"}))
		if err != nil {
			t.Fatal(err)
		}
		cfg.lister = func(kind string, _ provider.Options) provider.Lister {
			if kind == KindAnthropic {
				return listerFunc(func(ctx context.Context) ([]provider.Listed, error) {
					<-ctx.Done() // a server that never answers
					return nil, ctx.Err()
				})
			}
			return listerFunc(func(context.Context) ([]provider.Listed, error) {
				var many []provider.Listed
				for i := range provider.MaxListed + 50 {
					many = append(many, provider.Listed{ID: fmt.Sprintf("m%d", i)})
				}
				return many, nil
			})
		}
		got := cfg.Discover(context.Background(), "")
		if len(got) != provider.MaxListed || got[0].Spec != "openai:m0" {
			t.Errorf("discover = %d models from %v, want %d from openai", len(got), got[:1], provider.MaxListed)
		}
	})
}

type listerFunc func(ctx context.Context) ([]provider.Listed, error)

func (f listerFunc) List(ctx context.Context) ([]provider.Listed, error) { return f(ctx) }

// testEnv is a getenv over a map.
func testEnv(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// testCatalog is the catalog of a config.toml's [providers] tables.
func testCatalog(text string, getenv func(string) string) (*Catalog, error) {
	var file struct {
		Providers map[string]Provider `toml:"providers"`
	}
	if _, err := toml.Decode(text, &file); err != nil {
		return nil, err
	}
	return New(Options{Providers: file.Providers, Getenv: getenv}), nil
}
