package gemini

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/provider/gemini/geminitest"
)

// A stage's parameters reach streamGenerateContent in generationConfig,
// under Gemini's names, beside what coda puts there.
func TestModel_params(t *testing.T) {
	f := newFake(t, testKey, geminitest.Turn{Text: "OK."})
	m := fakeGemini(f, "gemini-3-flash-preview", Options{Thinking: ThinkingLevel})
	req := &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Text: "hi"}}, Effort: llm.EffortLow,
		Params: map[string]any{"temperature": 0.4, "top_k": int64(32), "max_output_tokens": int64(256), "stop": "END"}}
	if _, err := m.Stream(context.Background(), req, func(llm.Delta) error { return nil }); err != nil {
		t.Fatal(err)
	}
	var body struct {
		GenerationConfig map[string]any `json:"generationConfig"`
	}
	json.Unmarshal(f.Requests()[0].Raw, &body)
	gc := body.GenerationConfig
	if gc["temperature"] != 0.4 || gc["topK"] != 32.0 || gc["maxOutputTokens"] != 256.0 || gc["thinkingConfig"] == nil {
		t.Errorf("generationConfig %v", gc)
	}
	if stops, _ := gc["stopSequences"].([]any); len(stops) != 1 || stops[0] != "END" {
		t.Errorf("stopSequences %v", gc["stopSequences"])
	}
}
