package openai

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/provider/openai/openaitest"
	"github.com/coda-acp/coda/engine/provider/sse"
)

// routed is a client that sends what is meant for api.openai.com to f.
func routed(f *openaitest.Server) *http.Client {
	to, _ := url.Parse(f.URL)
	return &http.Client{Transport: rewrite(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.URL.Scheme, r.URL.Host, r.Host = to.Scheme, to.Host, ""
		return f.Client().Transport.RoundTrip(r)
	})}
}

type rewrite func(*http.Request) (*http.Response, error)

func (f rewrite) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// OpenAI is sent the session's key as prompt_cache_key, on chat
// completions and on the Responses API, cut to the 64 characters it
// takes; the fake takes it, and credits the repeated prefix by it. Other
// servers are sent none.
func TestModel_promptCacheKey(t *testing.T) {
	f := openaitest.NewServer()
	defer f.Close()
	f.Cache = true
	long := "coda-" + strings.Repeat("k", 70)
	req := &llm.Request{System: strings.Repeat("You read code carefully. ", 400), Messages: []llm.Message{{Role: llm.RoleUser, Text: "Hi."}}, CacheKey: long}
	opts := Options{APIKey: "k", Client: routed(f), Retry: sse.Retry{Tries: 1}}
	for _, m := range []llm.Model{New("gpt-4.1", opts), NewResponses("gpt-4.1", opts)} {
		for range 2 {
			if _, err := m.Stream(context.Background(), req, func(llm.Delta) error { return nil }); err != nil {
				t.Fatalf("%T: %v", m, err)
			}
		}
	}
	other := Options{BaseURL: f.URL, APIKey: "k", Client: f.Client(), Retry: sse.Retry{Tries: 1}}
	if _, err := New("gpt-4.1", other).Stream(context.Background(), req, func(llm.Delta) error { return nil }); err != nil {
		t.Fatal(err)
	}
	reqs := f.Requests()
	if len(reqs) != 5 {
		t.Fatalf("%d requests", len(reqs))
	}
	for i, r := range reqs[:4] {
		if r.Body["prompt_cache_key"] != long[:64] || r.Refused != "" {
			t.Errorf("request %d: prompt_cache_key %v (refused %q)", i, r.Body["prompt_cache_key"], r.Refused)
		}
	}
	if reqs[1].Cached == 0 || reqs[3].Cached == 0 {
		t.Errorf("the fake credited %d and %d tokens to the second calls", reqs[1].Cached, reqs[3].Cached)
	}
	if _, has := reqs[4].Body["prompt_cache_key"]; has {
		t.Errorf("a server that is not OpenAI was sent prompt_cache_key")
	}
	// The fake holds the key to the API's rule.
	resp, err := f.Client().Post(f.URL+"/chat/completions", "application/json", strings.NewReader(`{"model":"gpt-4.1","stream":true,"messages":[{"role":"user","content":"Hi."}],"prompt_cache_key":"`+long+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if last := f.Requests()[5]; resp.StatusCode != 400 || !strings.Contains(last.Refused, "Invalid 'prompt_cache_key': string too long. Expected a string with maximum length 64, but got a string with length 75 instead.") {
		t.Errorf("a key of 75 characters: %d %q", resp.StatusCode, last.Refused)
	}
}
