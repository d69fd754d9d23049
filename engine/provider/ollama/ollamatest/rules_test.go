package ollamatest

import (
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine/provider/internal/fakekit"
)

type testCase struct {
	body  string
	setup func(*Server)
}

// Every rule refuses a request that breaks it, under its own name.
func TestRules(t *testing.T) {
	body := func(model string, extra ...string) string {
		return `{"model":"` + model + `","messages":[{"role":"user","content":"hi"}]` + strings.Join(append([]string{""}, extra...), ",") + `}`
	}
	cases := map[string]testCase{
		"json":                {body: "{"},
		"model-pulled":        {body: body("nope:1b")},
		"tools-capability":    {body: body("plain:1b", `"tools":[{"type":"function","function":{"name":"f"}}]`)},
		"format-schema":       {body: body("plain:1b", `"format":{"type":"object"}`), setup: func(s *Server) { s.NoFormatSchema = true }},
		"thinking-capability": {body: body("plain:1b", `"think":true`)},
		"memory":              {body: body("plain:1b", `"options":{"num_ctx":65536}`), setup: func(s *Server) { s.MaxNumCtx = 8192 }},
	}
	fakekit.TestRules(t, rules, cases, func(t *testing.T, c testCase) string {
		s := NewServer(Model{Name: "plain:1b", Arch: "llama", ContextLength: 8192, Capabilities: []string{"completion"}})
		defer s.Close()
		if c.setup != nil {
			c.setup(s)
		}
		resp, err := s.Client().Post(s.URL+"/api/chat", "application/json", strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		reqs := s.Requests()
		if len(reqs) != 1 || reqs[0].Refused == "" || resp.StatusCode < 400 {
			t.Fatalf("status %d, %d requests: not refused", resp.StatusCode, len(reqs))
		}
		return reqs[0].Rule
	})
}
