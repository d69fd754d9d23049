package ollamatest

import "encoding/json"

// Prompt reuse, as an Ollama server does it: a model's runner keeps the
// KV cache of the last prompt it evaluated and evaluates again only what
// follows the longest prefix a new prompt shares with it (llama.cpp's
// cache_prompt). Ollama's reply has no field for what it reused, so the
// fake credits it in Request.Cached (tokens, 4 bytes each of the prompt
// as render writes it), against the model's last request.

// Prompt is a request body's prompt as the fake renders it (render).
func Prompt(raw []byte) []byte {
	var b map[string]any
	if json.Unmarshal(raw, &b) != nil {
		return nil
	}
	return []byte(render(b))
}

// credit sets req.Cached from the model's last prompt, and keeps prompt
// as that.
func (s *Server) credit(req *Request, model, prompt string) {
	s.mu.Lock()
	if s.prompts == nil {
		s.prompts = map[string]string{}
	}
	last := s.prompts[model]
	s.prompts[model] = prompt
	s.mu.Unlock()
	n := 0
	for n < len(last) && n < len(prompt) && last[n] == prompt[n] {
		n++
	}
	s.Log.Locked(func() { req.Cached = n / 4 })
}
