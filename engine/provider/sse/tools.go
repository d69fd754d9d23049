package sse

import (
	"strings"

	"github.com/coda-acp/coda/engine/llm"
)

// toolsRefusals are what OpenAI-compatible servers answer, in place of a
// reply, when the model or the server cannot take tools (DESIGN §15). The
// error then wraps llm.ErrToolsUnsupported, is never retried, and the
// engine makes the same call again without tools.
var toolsRefusals = []string{
	// Ollama, HTTP 400, for a model whose template has no tools
	// capability: "registry.ollama.ai/library/gemma3:4b does not support
	// tools" (ollama/ollama#6027, #14795).
	"does not support tools",
	// llama.cpp's server started without --jinja, HTTP 500: "tools param
	// requires --jinja flag"; before --jinja existed, "Unsupported param:
	// tools" (ggml-org/llama.cpp#10920).
	"tools param requires --jinja",
	"unsupported param: tools",
	// vLLM started without auto tool choice, HTTP 400: "\"auto\" tool
	// choice requires --enable-auto-tool-choice and --tool-call-parser to
	// be set" (vllm-project/vllm#9986).
	"tool choice requires --enable-auto-tool-choice",
}

// toolsRefused reports whether an error reply says the model cannot take
// tools.
func toolsRefused(e *StatusError) bool {
	if e.Code < 400 {
		return false
	}
	msg := strings.ToLower(e.Message)
	for _, r := range toolsRefusals {
		if strings.Contains(msg, r) {
			return true
		}
	}
	return false
}

// ToolsUnsupported is a *StatusError whose server refused the request's
// tools: its text is the server's, and it wraps both the status error and
// llm.ErrToolsUnsupported.
type ToolsUnsupported struct{ *StatusError }

func (e ToolsUnsupported) Unwrap() []error {
	return []error{e.StatusError, llm.ErrToolsUnsupported}
}
