package openaitest

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/coda-acp/coda/engine/provider/internal/fakekit"
)

// Prompt caching, as OpenAI credits it (platform.openai.com/docs/guides/
// prompt-caching): a request whose prompt starts with one seen before
// reads that prefix from the cache once the prompt is 1,024 tokens or
// more, in steps of 128 tokens, and says so in usage's cached_tokens
// (chat: prompt_tokens_details, Responses: input_tokens_details). The
// cache is routed by prompt_cache_key where the request gives one. With
// Cache set the fake credits so, a token being 4 bytes of the prompt in
// the order the model reads it (Prompt), against the last request of the
// same prompt_cache_key ("" for none); a Turn whose Usage is scripted
// keeps it.

// cacheKeyRules hold prompt_cache_key to the API's rule (keyProblem).
var cacheKeyRules = []fakekit.Rule[*call]{
	{Name: "prompt-cache-key", Source: docResponses + "/create#responses-create-prompt_cache_key", Check: func(c *call) error {
		msg := keyProblem(c.b)
		return fakekit.IfParam(msg != "", "prompt_cache_key", "%s", msg)
	}},
}

// keyProblem is what OpenAI answers a prompt_cache_key it does not take
// with: a string of at most 64 characters (the API reference's
// prompt_cache_key; "Invalid 'prompt_cache_key': string too long. Expected
// a string with maximum length 64, but got a string with length 69
// instead.", as clients report it: vybestack/llxprt-code#2135,
// theopenco/llmgateway#3110); "" when it takes it, or there is none.
func keyProblem(b map[string]any) string {
	v, has := b["prompt_cache_key"]
	if !has {
		return ""
	}
	key, ok := v.(string)
	if !ok {
		return fmt.Sprintf("Invalid type for 'prompt_cache_key': expected a string, but got %T instead.", v)
	}
	if n := utf8.RuneCountInString(key); n > 64 {
		return fmt.Sprintf("Invalid 'prompt_cache_key': string too long. Expected a string with maximum length 64, but got a string with length %d instead.", n)
	}
	return ""
}

// Prompt is a request body's prompt in the order the model reads it: the
// tools, then the system prompt and the messages (chat: messages;
// Responses: instructions, then input), each as the request wrote it.
func Prompt(raw []byte) []byte {
	var b map[string]json.RawMessage
	if json.Unmarshal(raw, &b) != nil {
		return nil
	}
	var out []byte
	for _, k := range []string{"tools", "instructions", "messages", "input"} {
		out = append(out, b[k]...)
	}
	return out
}

// cacheMin and cacheStep are the least prompt a cache read takes, and the
// steps it counts in, in tokens.
const cacheMin, cacheStep = 1024, 128

// credit is the usage of a reply to req with its cache read credited, when
// the server caches and the turn's usage is not scripted.
func (s *Server) credit(req *Request, u Usage) Usage {
	if !s.Cache || u != (Usage{}) {
		return u
	}
	key, _ := req.Body["prompt_cache_key"].(string)
	prompt := Prompt(req.Raw)
	s.mu.Lock()
	if s.prompts == nil {
		s.prompts = map[string][]byte{}
	}
	last := s.prompts[key]
	s.prompts[key] = prompt
	s.mu.Unlock()
	n := 0
	for n < len(last) && n < len(prompt) && last[n] == prompt[n] {
		n++
	}
	u = Usage{Input: len(prompt) / 4, Output: 10}
	if tokens := n / 4; tokens >= cacheMin {
		u.Cached = tokens / cacheStep * cacheStep
	}
	s.Log.Locked(func() { req.Cached = u.Cached })
	return u
}
