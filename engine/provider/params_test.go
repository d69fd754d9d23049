package provider

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/provider/sse"
)

// Each API gets the common parameters under its own names, nested where
// it nests them; the vendor's own keys as written, a table merged into
// the body's table of that name; shaping says which field carries which.
func TestWithParams(t *testing.T) {
	params := map[string]any{
		"temperature": 0.3, "top_p": 0.8, "top_k": int64(40), "max_output_tokens": int64(100), "seed": int64(5), "stop": "END",
		"think": false, "generationConfig": map[string]any{"candidateCount": int64(1)},
	}
	body := []byte(`{"model":"m","max_tokens":4096,"generationConfig":{"thinkingConfig":{"thinkingLevel":"low"}},"options":{"num_ctx":8192}}`)
	tests := []struct {
		api  string
		want map[string]any // the body's fields after
	}{
		{ParamsChat, map[string]any{"temperature": 0.3, "top_p": 0.8, "top_k": 40.0, "max_tokens": 100.0, "seed": 5.0, "stop": "END"}},
		{ParamsChatOpenAI, map[string]any{"max_completion_tokens": 100.0, "max_tokens": 4096.0, "top_k": 40.0}},
		{ParamsResponses, map[string]any{"max_output_tokens": 100.0, "seed": 5.0}},
		{ParamsAnthropic, map[string]any{"max_tokens": 100.0, "stop_sequences": []any{"END"}, "top_k": 40.0}},
		{ParamsGemini, map[string]any{"generationConfig": map[string]any{
			"thinkingConfig": map[string]any{"thinkingLevel": "low"}, "candidateCount": 1.0,
			"temperature": 0.3, "topP": 0.8, "topK": 40.0, "maxOutputTokens": 100.0, "seed": 5.0, "stopSequences": []any{"END"},
		}}},
		{ParamsOllama, map[string]any{"think": false, "options": map[string]any{
			"num_ctx": 8192.0, "temperature": 0.3, "top_p": 0.8, "top_k": 40.0, "num_predict": 100.0, "seed": 5.0, "stop": []any{"END"},
		}}},
	}
	for _, tt := range tests {
		var sh sse.Shaping
		out, err := WithParams(tt.api, &llm.Request{Params: params}, body, &sh)
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("%s: %v: %s", tt.api, err, out)
		}
		for k, v := range tt.want {
			if diff := cmp.Diff(v, got[k]); diff != "" {
				t.Errorf("%s: %s (-want +got):\n%s", tt.api, k, diff)
			}
		}
		if sh.Params[ParamField(tt.api, "temperature")] != "temperature" || sh.Params["think"] != "think" {
			t.Errorf("%s: shaping.Params = %v", tt.api, sh.Params)
		}
	}
	if got := params["generationConfig"].(map[string]any); len(got) != 1 {
		t.Errorf("the request's own parameters were written into: %v", got)
	}
	var sh sse.Shaping
	if out, err := WithParams(ParamsChat, &llm.Request{}, body, &sh); err != nil || string(out) != string(body) || sh.Params != nil {
		t.Errorf("no parameters: %s, %v, %v; want the body as it was", out, err, sh.Params)
	}
}
