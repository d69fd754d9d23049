package ollama

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/provider/ollama/ollamatest"
)

// A stage's parameters reach Ollama's /api/chat: the sampling ones in
// options beside coda's num_ctx, think (Ollama's own, at the top) as
// written.
func TestModel_params(t *testing.T) {
	f := ollamatest.NewServer(ollamatest.Model{Name: "qwen3:8b", Arch: "qwen3", ContextLength: 40960, Capabilities: []string{"completion", "tools", "thinking"}})
	defer f.Close()
	m := New("qwen3:8b", Options{BaseURL: f.URL + "/v1", Client: f.Client()})
	req := &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Text: "hi"}},
		Params: map[string]any{"temperature": 0.1, "max_output_tokens": int64(64), "seed": int64(3), "think": false}}
	if _, _, err := streamOf(t, m, req); err != nil {
		t.Fatal(err)
	}
	got := f.Requests()[0].Body
	if diff := cmp.Diff(map[string]any{"num_ctx": 40960.0, "temperature": 0.1, "num_predict": 64.0, "seed": 3.0}, got["options"]); diff != "" {
		t.Errorf("options (-want +got):\n%s", diff)
	}
	if got["think"] != false {
		t.Errorf("think %v, want false", got["think"])
	}
}
