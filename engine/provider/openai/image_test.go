package openai

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coda-acp/coda/engine/llm"
)

// imageRequest is a prompt with an image, as the engine sends it.
var imageRequest = &llm.Request{Messages: []llm.Message{{
	Role: llm.RoleUser, Text: "What does the chart show?",
	Images: []llm.Image{{MIMEType: "image/png", Data: []byte("\x89PNG\r\n\x1a\nchart")}},
}}}

// An image reaches the request body as an image_url part with a data: URL,
// before the text; a model without vision gets a line in its place.
func TestModel_images(t *testing.T) {
	for _, noVision := range []bool{false, true} {
		s := newServer(t, reply{file: "text.sse"})
		m := newModel(s, &sleeps{})
		m.opts.NoVision = noVision
		if _, _, err := collect(t, m, imageRequest); err != nil {
			t.Fatal(err)
		}
		var body struct {
			Messages []struct {
				Role    string `json:"role"`
				Content any    `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(s.requests[0].body, &body); err != nil {
			t.Fatal(err)
		}
		var want any = []any{
			map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:image/png;base64,iVBORw0KGgpjaGFydA=="}},
			map[string]any{"type": "text", "text": "What does the chart show?"},
		}
		if noVision {
			want = "[The user attached an image (image/png, 13 bytes); this model cannot see images.]\n\nWhat does the chart show?"
		}
		if diff := cmp.Diff(want, body.Messages[0].Content); diff != "" {
			t.Errorf("NoVision %v: the user message's content (-want +got):\n%s", noVision, diff)
		}
	}
}
