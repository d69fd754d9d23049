package provider

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/provider/sse"
)

func TestOptions_WithDefaults(t *testing.T) {
	o := Options{}.WithDefaults("openai", "gpt-5.4", "https://api.openai.com/v1")
	if o.Name != "openai:gpt-5.4" || o.BaseURL != "https://api.openai.com/v1" || o.Timeout != sse.DefaultTimeout || o.Log == nil {
		t.Errorf("defaults: %+v", o)
	}
	o = Options{Name: "local:m", BaseURL: "http://h:1/v1/", Timeout: 7}.WithDefaults("openai", "m", "https://x")
	if o.Name != "local:m" || o.BaseURL != "http://h:1/v1" || o.Timeout != 7 {
		t.Errorf("set fields kept, the base's slash trimmed: %+v", o)
	}
	c := o.Call("/chat/completions", o.Header("Authorization", "Bearer "))
	if c.URL != "http://h:1/v1/chat/completions" || c.Name != "local:m" || c.Timeout != 7 {
		t.Errorf("call: %+v", c)
	}
}

func TestOptions_Header(t *testing.T) {
	o := Options{APIKey: "sk-1", Headers: map[string]string{"x-title": "coda"}}
	h := o.Header("Authorization", "Bearer ")
	if h.Get("Authorization") != "Bearer sk-1" || h.Get("X-Title") != "coda" {
		t.Errorf("header %v", h)
	}
	if h := (&Options{}).Header("Authorization", "Bearer "); len(h) != 0 {
		t.Errorf("no key, no header: %v", h)
	}
}

func TestOptions_EffortOf(t *testing.T) {
	o := Options{Effort: llm.EffortLow}
	if got := o.EffortOf(&llm.Request{}); got != llm.EffortLow {
		t.Errorf("default %q", got)
	}
	if got := o.EffortOf(&llm.Request{Effort: llm.EffortHigh}); got != llm.EffortHigh {
		t.Errorf("the request's own %q", got)
	}
}

func TestOnce_Warn(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	var once Once
	for range 3 {
		once.Warn(log, "a", "first warning", "model", "m")
		once.Warn(log, "b", "second warning")
	}
	if n := strings.Count(buf.String(), "first warning"); n != 1 {
		t.Errorf("said %d times:\n%s", n, buf.String())
	}
	if n := strings.Count(buf.String(), "second warning"); n != 1 {
		t.Errorf("said %d times:\n%s", n, buf.String())
	}
}

func TestEmbedding(t *testing.T) {
	for id, want := range map[string]bool{
		"text-embedding-3-large": true, "nomic-embed-text": true, "whisper-1": true, "tts-1-hd": true,
		"dall-e-3": true, "gpt-image-1": true, "omni-moderation-latest": true, "davinci-002": true,
		"gpt-5.4": false, "o4-mini": false, "qwen3:8b": false, "gpt-4o-mini-transcribe": true,
	} {
		if got := Embedding(id); got != want {
			t.Errorf("Embedding(%q) = %v", id, got)
		}
	}
}
