package anthropic

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coda-acp/coda/engine/provider"
)

// GET /v1/models's pages, in the shape of
// https://docs.anthropic.com/en/api/models-list (the later listing's
// max_input_tokens and capabilities included, the older one without).
func TestLister(t *testing.T) {
	pages := map[string]string{
		"": `{"data": [
			{"id": "claude-opus-5-5", "type": "model", "display_name": "Claude Opus 5.5", "created_at": "2026-09-22T00:00:00Z", "max_input_tokens": 1000000, "max_tokens": 128000,
			 "capabilities": {"effort": {"supported": true, "low": {"supported": true}, "max": {"supported": true}}, "thinking": {"supported": true, "types": {"adaptive": {"supported": true}, "enabled": {"supported": false}}}}},
			{"id": "claude-haiku-4-5-20251001", "type": "model", "display_name": "Claude Haiku 4.5", "created_at": "2025-10-15T00:00:00Z"}
		], "has_more": true, "first_id": "claude-opus-5-5", "last_id": "claude-haiku-4-5-20251001"}`,
		"claude-haiku-4-5-20251001": `{"data": [
			{"id": "claude-sonnet-4-5-20250929", "type": "model", "display_name": "Claude Sonnet 4.5", "created_at": "2025-09-29T00:00:00Z"}
		], "has_more": false, "first_id": "claude-sonnet-4-5-20250929", "last_id": "claude-sonnet-4-5-20250929"}`,
	}
	var versions []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		versions = append(versions, r.Header.Get("Anthropic-Version"))
		if r.URL.Path != "/v1/models" || r.Header.Get("X-Api-Key") != testKey {
			w.WriteHeader(401)
			w.Write([]byte(`{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(pages[r.URL.Query().Get("after_id")]))
	}))
	defer srv.Close()
	got, err := NewLister(Options{BaseURL: srv.URL, APIKey: testKey, Client: srv.Client()}).List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []provider.Listed{
		{ID: "claude-opus-5-5", ContextWindow: 1000000},
		{ID: "claude-haiku-4-5-20251001"},
		{ID: "claude-sonnet-4-5-20250929"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("listed (-want +got):\n%s", diff)
	}
	if len(versions) != 2 || versions[0] != Version {
		t.Errorf("anthropic-version sent %q", versions)
	}
	_, err = NewLister(Options{BaseURL: srv.URL, APIKey: "sk-ant-wrong-key", Client: srv.Client()}).List(context.Background())
	if err == nil || !strings.Contains(err.Error(), "invalid x-api-key") || strings.Contains(err.Error(), "sk-ant-wrong-key") {
		t.Errorf("error %v", err)
	}
}
