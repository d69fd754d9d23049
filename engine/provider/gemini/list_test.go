package gemini

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/provider"
)

// models.list's pages, in the shape of
// https://ai.google.dev/api/models#method:-models.list: the models that
// generate content are listed, the others (embeddings, Imagen) are not.
func TestLister(t *testing.T) {
	pages := map[string]string{
		"": `{"models": [
			{"name": "models/gemini-2.5-flash", "version": "001", "displayName": "Gemini 2.5 Flash", "inputTokenLimit": 1048576, "outputTokenLimit": 65536, "supportedGenerationMethods": ["generateContent", "countTokens", "createCachedContent", "batchGenerateContent"], "thinking": true},
			{"name": "models/text-embedding-004", "version": "004", "inputTokenLimit": 2048, "outputTokenLimit": 1, "supportedGenerationMethods": ["embedContent"]},
			{"name": "models/gemma-3-27b-it", "inputTokenLimit": 131072, "supportedGenerationMethods": ["generateContent", "countTokens"]}
		], "nextPageToken": "Chltb2RlbHMvZ2VtaW5pLTIuNS1mbGFzaA=="}`,
		"Chltb2RlbHMvZ2VtaW5pLTIuNS1mbGFzaA==": `{"models": [
			{"name": "models/gemini-3-pro-preview", "inputTokenLimit": 1048576, "supportedGenerationMethods": ["generateContent", "countTokens"], "thinking": true},
			{"name": "models/imagen-4.0-generate-001", "inputTokenLimit": 480, "supportedGenerationMethods": ["predict"]},
			{"name": "models/gemini-2.5-flash-image", "inputTokenLimit": 32768, "supportedGenerationMethods": ["generateContent"]},
			{"name": "models/huge", "inputTokenLimit": 1e30, "supportedGenerationMethods": ["generateContent"]},
			{"name": "models/wrong", "inputTokenLimit": -5, "supportedGenerationMethods": ["generateContent"]}
		]}`,
	}
	var keys []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		keys = append(keys, r.Header.Get("X-Goog-Api-Key"))
		if r.URL.Path != "/v1beta/models" || r.URL.Query().Has("key") {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(pages[r.URL.Query().Get("pageToken")]))
	}))
	defer srv.Close()
	got, err := NewLister(Options{BaseURL: srv.URL + "/v1beta", APIKey: testKey, Client: srv.Client()}).List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []provider.Listed{
		{ID: "gemini-2.5-flash", ContextWindow: 1048576},
		{ID: "gemma-3-27b-it", ContextWindow: 131072, NoTools: "Gemma on the Gemini API has no function calling"},
		{ID: "gemini-3-pro-preview", ContextWindow: 1048576},
		{ID: "gemini-2.5-flash-image", ContextWindow: 32768, NoTools: "an image generation model: it has no function calling"},
		{ID: "huge", ContextWindow: llm.MaxWindow}, // a window past what coda takes is held to it
		{ID: "wrong", ContextWindow: 0},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("listed (-want +got):\n%s", diff)
	}
	if len(keys) != 2 || keys[0] != testKey {
		t.Errorf("keys sent %q", keys)
	}
}

// A refused key is an error naming the provider, with no key in it.
func TestLister_error(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(400)
		w.Write([]byte(`{"error": {"code": 400, "message": "API key not valid: ` + testKey + `", "status": "INVALID_ARGUMENT"}}`))
	}))
	defer srv.Close()
	_, err := NewLister(Options{BaseURL: srv.URL, APIKey: testKey, Client: srv.Client()}).List(context.Background())
	if err == nil || strings.Contains(err.Error(), testKey) || !strings.Contains(err.Error(), "gemini:") || errors.Is(err, llm.ErrModelUnavailable) {
		t.Errorf("error %v", err)
	}
}
