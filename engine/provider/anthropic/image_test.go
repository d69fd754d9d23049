package anthropic

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coda-acp/coda/engine/llm"
)

// An image reaches the request body as an image block with a base64
// source, before the text; a model without vision gets a line in its
// place.
func TestModel_images(t *testing.T) {
	req := &llm.Request{Messages: []llm.Message{{
		Role: llm.RoleUser, Text: "What does the chart show?",
		Images: []llm.Image{{MIMEType: "image/png", Data: []byte("\x89PNG\r\n\x1a\nchart")}},
	}}}
	for _, noVision := range []bool{false, true} {
		s := newServer(t, reply{file: "text.sse"})
		var waits int
		m := newModel(s, &waits)
		m.opts.NoVision = noVision
		m.opts.NoCache = true
		if _, _, err := collect(t, m, req); err != nil {
			t.Fatal(err)
		}
		var body struct {
			Messages []struct {
				Content any `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(s.requests[0].body, &body); err != nil {
			t.Fatal(err)
		}
		var want any = []any{
			map[string]any{"type": "image", "source": map[string]any{"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgpjaGFydA=="}},
			map[string]any{"type": "text", "text": "What does the chart show?"},
		}
		if noVision {
			want = []any{map[string]any{"type": "text", "text": "[The user attached an image (image/png, 13 bytes); this model cannot see images.]\n\nWhat does the chart show?"}}
		}
		if diff := cmp.Diff(want, body.Messages[0].Content); diff != "" {
			t.Errorf("NoVision %v: the user message's content (-want +got):\n%s", noVision, diff)
		}
	}
}
