package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine/llm"
)

// vision = false, on a provider or one of its models, reaches the
// provider: that model is sent a line of text in each image's place; the
// others the image.
func TestConfig_vision(t *testing.T) {
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies = append(bodies, string(b))
		w.Header().Set("Content-Type", "text/event-stream")
		if strings.HasSuffix(r.URL.Path, "/messages") {
			w.Write([]byte("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{}}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"))
			return
		}
		w.Write([]byte(`data: {"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n"))
	}))
	defer srv.Close()
	path := writeConfig(t, `
[providers.blind]
kind = "openai"
base_url = "`+srv.URL+`/v1"
api_key_env = ""
vision = false
[providers.blind.models."seer"]
vision = true

[providers.claude]
kind = "anthropic"
base_url = "`+srv.URL+`"
api_key_env = ""
[providers.claude.models."text-only"]
vision = false
`)
	c, err := loadConfig(path, configEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	req := &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Text: "What is this?", Images: []llm.Image{{MIMEType: "image/png", Data: []byte("\x89PNG\r\n\x1a\n")}}}}}
	for spec, sees := range map[string]bool{"blind:m": false, "blind:seer": true, "claude:claude-x": true, "claude:text-only": false} {
		bodies = nil
		m, err := c.models().Model(spec)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Stream(context.Background(), req, func(llm.Delta) error { return nil }); err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		standIn := strings.Contains(bodies[0], "this model cannot see images")
		image := strings.Contains(bodies[0], "iVBORw0KGgo=")
		if standIn == sees || image != sees {
			t.Errorf("%s: stand-in %v, image %v; want the image %v", spec, standIn, image, sees)
		}
	}
}
