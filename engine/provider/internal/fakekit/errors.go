package fakekit

import "net/http"

// Each vendor's error body, as its API reference gives it.

// OpenAIError writes OpenAI's {"error": {message, type, param, code}}
// (platform.openai.com/docs/guides/error-codes); "" param or code is null.
func OpenAIError(w http.ResponseWriter, status int, msg, param, code string) {
	e := map[string]any{"message": msg, "type": "invalid_request_error", "param": nil, "code": nil}
	if param != "" {
		e["param"] = param
	}
	if code != "" {
		e["code"] = code
	}
	WriteJSON(w, status, "application/json", map[string]any{"error": e})
}

// AnthropicError writes Anthropic's {"type": "error", "error": {type,
// message}} (docs.anthropic.com/en/api/errors).
func AnthropicError(w http.ResponseWriter, status int, typ, msg string) {
	WriteJSON(w, status, "application/json", map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}, "request_id": "req_fake"})
}

// GoogleError writes Google's {"error": {code, message, status}}
// (ai.google.dev/gemini-api/docs/troubleshooting).
func GoogleError(w http.ResponseWriter, code int, status, msg string) {
	WriteJSON(w, code, "application/json; charset=UTF-8", map[string]any{"error": map[string]any{"code": code, "message": msg, "status": status}})
}

// OllamaError writes Ollama's {"error": message}
// (docs.ollama.com/api/errors).
func OllamaError(w http.ResponseWriter, status int, msg string) {
	WriteJSON(w, status, "application/json; charset=utf-8", map[string]string{"error": msg})
}
