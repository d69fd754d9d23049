package provider

import (
	"strings"

	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/provider/sse"
)

// A stage's model parameters (llm.Request.Params, DESIGN §25) as each API
// names them. The common ones are mapped: temperature, top_p, top_k,
// max_output_tokens, seed and stop, each under the field its API's
// reference gives it; a parameter an API has no field for (seed on
// Anthropic's and the Responses API, say) is sent under its own name, and
// the server's refusal drops it (sse.Shaping.Params). Every other key is
// the vendor's own and is sent as written, at the top of the request body,
// a table merged into the body's table of that name (Gemini's
// generationConfig, Ollama's options).

// Param APIs: the request shapes Params maps to.
const (
	ParamsChat       = "chat"        // chat completions of any OpenAI-style server
	ParamsChatOpenAI = "chat-openai" // OpenAI's own, which wants max_completion_tokens
	ParamsResponses  = "responses"
	ParamsAnthropic  = "anthropic"
	ParamsGemini     = "gemini"
	ParamsOllama     = "ollama"
)

// paramFields are the mapped parameters' fields, by API, as dotted paths
// in the request body. Sources: OpenAI's chat completions and Responses
// API references (platform.openai.com/docs/api-reference), Anthropic's
// Messages API (docs.anthropic.com/en/api/messages), Gemini's
// GenerationConfig (ai.google.dev/api/generate-content#generationconfig),
// Ollama's /api/chat options (github.com/ollama/ollama docs/api.md, "Valid
// Parameters and Values" of docs/modelfile.md).
var paramFields = map[string]map[string]string{
	ParamsChat: {
		"temperature": "temperature", "top_p": "top_p", "top_k": "top_k",
		"max_output_tokens": "max_tokens", "seed": "seed", "stop": "stop",
	},
	ParamsChatOpenAI: {
		"temperature": "temperature", "top_p": "top_p",
		"max_output_tokens": "max_completion_tokens", "seed": "seed", "stop": "stop",
	},
	ParamsResponses: {
		"temperature": "temperature", "top_p": "top_p", "max_output_tokens": "max_output_tokens",
	},
	ParamsAnthropic: {
		"temperature": "temperature", "top_p": "top_p", "top_k": "top_k",
		"max_output_tokens": "max_tokens", "stop": "stop_sequences",
	},
	ParamsGemini: {
		"temperature": "generationConfig.temperature", "top_p": "generationConfig.topP",
		"top_k": "generationConfig.topK", "max_output_tokens": "generationConfig.maxOutputTokens",
		"seed": "generationConfig.seed", "stop": "generationConfig.stopSequences",
	},
	ParamsOllama: {
		"temperature": "options.temperature", "top_p": "options.top_p", "top_k": "options.top_k",
		"max_output_tokens": "options.num_predict", "seed": "options.seed", "stop": "options.stop",
	},
}

// ParamField is the field of the request body api sends the parameter
// name in, as a dotted path: its mapped field, else name itself.
func ParamField(api, name string) string {
	if f, ok := paramFields[api][name]; ok {
		return f
	}
	return name
}

// WithParams lays req.Params over body (a JSON object) as api names them,
// and notes in shaping which field carries which parameter, so that a
// server's refusal of one names it (sse.Shaping.Params). A body with no
// parameters to lay is returned as it is.
func WithParams(api string, req *llm.Request, body []byte, shaping *sse.Shaping) ([]byte, error) {
	if len(req.Params) == 0 {
		return body, nil
	}
	fields := map[string]any{}
	for name, v := range req.Params {
		field := ParamField(api, name)
		if name == "stop" && api != ParamsChat && api != ParamsChatOpenAI {
			if s, ok := v.(string); ok {
				v = []any{s} // the others take a list only
			}
		}
		put(fields, strings.Split(field, "."), v)
		if shaping.Params == nil {
			shaping.Params = map[string]string{}
		}
		shaping.Params[field] = name
	}
	return sse.MergeJSON(body, fields)
}

// put sets the value at path in m, making the tables on the way.
func put(m map[string]any, path []string, v any) {
	for _, k := range path[:len(path)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	last := path[len(path)-1]
	if old, ok := m[last].(map[string]any); ok {
		if nv, ok := v.(map[string]any); ok {
			for k, x := range nv {
				old[k] = x
			}
			return
		}
	}
	m[last] = clone(v)
}

// clone copies v's tables, so that laying more into them never writes
// into the request's own parameters.
func clone(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := make(map[string]any, len(m))
	for k, x := range m {
		out[k] = clone(x)
	}
	return out
}
