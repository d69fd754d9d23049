package ollamatest

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/coda-acp/coda/engine/provider/internal/fakekit"
)

// A call is one /api/chat request as the rules read it.
type call struct {
	s       *Server
	req     *Request
	invalid error  // why the body is not JSON, or nil
	model   *Model // nil: not pulled
	name    string
}

// call decodes req's body and sets the context it is given.
func (s *Server) call(req *Request) *call {
	c := &call{s: s, req: req, invalid: json.Unmarshal(req.Raw, &req.Body)}
	c.name, _ = req.Body["model"].(string)
	c.model = s.model(c.name)
	req.NumCtx = DefaultNumCtx
	if o, ok := req.Body["options"].(map[string]any); ok {
		if n, ok := o["num_ctx"].(float64); ok && n > 0 {
			req.NumCtx = int(n)
		}
	}
	return c
}

// rules are what /api/chat holds a request to, in order (the package's
// doc says each in words).
var rules = []fakekit.Rule[*call]{
	{Name: "json", Source: "https://docs.ollama.com/api/chat", Check: func(c *call) error {
		return fakekit.If(c.invalid != nil, "invalid character in request body")
	}},
	{Name: "model-pulled", Source: "https://docs.ollama.com/api/errors", Check: func(c *call) error {
		if c.model == nil {
			return &fakekit.Refusal{Status: 404, Msg: fmt.Sprintf("model %q not found, try pulling it first", c.name)}
		}
		return nil
	}},
	{Name: "tools-capability", Source: "https://docs.ollama.com/capabilities/tool-calling", Check: func(c *call) error {
		_, ok := c.req.Body["tools"]
		return fakekit.If(ok && !slices.Contains(c.model.Capabilities, "tools"), "registry.ollama.ai/library/%s does not support tools", c.model.Name)
	}},
	{Name: "format-schema", Source: "https://ollama.com/blog/structured-outputs", Check: func(c *call) error {
		_, schema := c.req.Body["format"].(map[string]any)
		return fakekit.If(schema && c.s.NoFormatSchema, "invalid JSON schema in format")
	}},
	{Name: "thinking-capability", Source: "https://docs.ollama.com/capabilities/thinking", Check: func(c *call) error {
		think, ok := c.req.Body["think"]
		return fakekit.If(ok && think != false && !slices.Contains(c.model.Capabilities, "thinking"), "%q does not support thinking", c.name)
	}},
	{Name: "memory", Source: "https://github.com/ollama/ollama/issues/13556", Check: func(c *call) error {
		if most := c.s.MaxNumCtx; most > 0 && c.req.NumCtx > most {
			// About 128 KiB of KV cache a token, on 16 GiB of free memory.
			need := float64(c.req.NumCtx) * 128 / (1 << 20)
			return &fakekit.Refusal{Status: 500, Msg: fmt.Sprintf("model requires more system memory (%.1f GiB) than is available (%.1f GiB)", need, float64(most)*128/(1<<20))}
		}
		return nil
	}},
}
