package openai

import (
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/provider/openai/openaitest"
	"github.com/coda-acp/coda/engine/provider/sse"
)

// deadlines is a transport that records the deadline each request's
// context carries: what the fake server cannot see of a call's limit.
type deadlines struct {
	mu   sync.Mutex
	next http.RoundTripper
	got  []time.Time
}

func (d *deadlines) RoundTrip(r *http.Request) (*http.Response, error) {
	dl, _ := r.Context().Deadline()
	d.mu.Lock()
	d.got = append(d.got, dl)
	d.mu.Unlock()
	return d.next.RoundTrip(r)
}

// A stage's parameters reach the fake under each API's names (the common
// ones mapped, the vendor's own as written), and its request_timeout_secs
// bounds the call; a reasoning model's refusal of temperature is a
// MechanismError naming the parameter, for the engine to drop it.
func TestModel_params(t *testing.T) {
	f := openaitest.NewServer()
	defer f.Close()
	tr := &deadlines{next: f.Client().Transport}
	client := &http.Client{Transport: tr}
	params := map[string]any{
		"temperature": 0.2, "top_p": 0.9, "max_output_tokens": int64(512), "seed": int64(7), "stop": "END",
		"provider": map[string]any{"order": []any{"deepinfra"}}, // OpenRouter's, passed through
	}
	req := &llm.Request{Messages: simpleRequest.Messages, Params: params, Timeout: 900 * time.Second}

	before := time.Now()
	chat := New("gpt-4.1", Options{BaseURL: f.URL, Client: client, Retry: sse.Retry{Tries: 1}})
	if _, _, err := streamOf(t, chat, req); err != nil {
		t.Fatal(err)
	}
	after := time.Now()
	got := f.Requests()[0].Body
	want := map[string]any{"temperature": 0.2, "top_p": 0.9, "max_tokens": 512.0, "seed": 7.0, "stop": "END", "provider": map[string]any{"order": []any{"deepinfra"}}}
	for k, v := range want {
		if diff := cmp.Diff(v, got[k]); diff != "" {
			t.Errorf("chat completions %s (-want +got):\n%s", k, diff)
		}
	}
	if dl := tr.got[0]; dl.Before(before.Add(900*time.Second)) || dl.After(after.Add(900*time.Second)) {
		t.Errorf("the call's deadline %v is not 900s after it began (%v–%v)", dl, before, after)
	}
	if params["provider"].(map[string]any)["order"] == nil || len(params) != 6 {
		t.Errorf("the request's own parameters were changed: %v", params)
	}

	resp := NewResponses("gpt-4.1", Options{BaseURL: f.URL, Client: client, Retry: sse.Retry{Tries: 1}})
	if _, _, err := streamOf(t, resp, &llm.Request{Messages: simpleRequest.Messages, Params: map[string]any{"temperature": 0.2, "max_output_tokens": int64(512)}}); err != nil {
		t.Fatal(err)
	}
	got = f.Requests()[1].Body
	if got["temperature"] != 0.2 || got["max_output_tokens"] != 512.0 {
		t.Errorf("responses body: temperature %v, max_output_tokens %v", got["temperature"], got["max_output_tokens"])
	}
	if dl := tr.got[1]; dl.Before(after.Add(sse.DefaultMaxCallTime)) {
		t.Errorf("without a timeout the call has the provider's %v, not %v", sse.DefaultMaxCallTime, dl.Sub(after))
	}

	// A reasoning model refuses temperature while it reasons: a 400 the
	// engine reads as the parameter refused.
	o3 := NewResponses("o3", Options{BaseURL: f.URL, Client: client, Retry: sse.Retry{Tries: 1}})
	_, _, err := streamOf(t, o3, &llm.Request{Messages: simpleRequest.Messages, Params: map[string]any{"temperature": 0.2}})
	var me *llm.MechanismError
	if !errors.As(err, &me) || me.Mechanism != llm.ParamMechanism("temperature") {
		t.Fatalf("o3 with temperature: %v, want a MechanismError of param:temperature", err)
	}
	chatO3 := New("o3", Options{BaseURL: f.URL, Client: client, Retry: sse.Retry{Tries: 1}})
	_, _, err = streamOf(t, chatO3, &llm.Request{Messages: simpleRequest.Messages, Params: map[string]any{"top_p": 0.5, "seed": int64(1)}})
	if !errors.As(err, &me) || me.Mechanism != llm.ParamMechanism("top_p") {
		t.Fatalf("o3 with top_p on chat: %v, want a MechanismError of param:top_p", err)
	}
}
