package geminitest

import (
	"encoding/json"
)

// Implicit caching, as Gemini credits it (ai.google.dev/gemini-api/docs/
// caching, "Implicit caching"): a request whose prompt starts as an
// earlier one to the same model did reads that prefix from the cache,
// once it is 1,024 tokens or more (2.5 Flash's least; Pro's is larger),
// and says so in usageMetadata's cachedContentTokenCount. With Cache set
// the fake credits so, a token being 4 bytes of the prompt in the order
// the model reads it (Prompt), against the model's last request; a Turn
// whose Usage is scripted keeps it.

// Prompt is a request body's prompt in the order the model reads it: the
// tools, the system instruction, then the contents, as the request wrote
// them.
func Prompt(raw []byte) []byte {
	var b map[string]json.RawMessage
	if json.Unmarshal(raw, &b) != nil {
		return nil
	}
	var out []byte
	for _, k := range []string{"tools", "systemInstruction", "contents"} {
		out = append(out, b[k]...)
	}
	return out
}

// cacheMin is the least prefix, in tokens, that implicit caching reads.
const cacheMin = 1024

// credit is the usage of a reply to req with its cache read credited,
// when the server caches and the turn's usage is not scripted.
func (s *Server) credit(req *Request, u Usage) Usage {
	if !s.Cache || u != (Usage{}) {
		return u
	}
	prompt := Prompt(req.Raw)
	s.mu.Lock()
	if s.prompts == nil {
		s.prompts = map[string][]byte{}
	}
	last := s.prompts[req.Model]
	s.prompts[req.Model] = prompt
	s.mu.Unlock()
	n := 0
	for n < len(last) && n < len(prompt) && last[n] == prompt[n] {
		n++
	}
	u = Usage{Prompt: len(req.Raw) / 4, Candidates: 10}
	if tokens := n / 4; tokens >= cacheMin {
		u.Cached = tokens
	}
	s.Log.Locked(func() { req.Cached = u.Cached })
	return u
}
