package anthropictest

import (
	"net/http"
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine/provider/internal/fakekit"
)

// Every rule refuses a request that breaks it, under its own name: one
// case a rule, and a rule without a case fails the test.
func TestRules(t *testing.T) {
	const user = `{"role":"user","content":[{"type":"text","text":"hi"}]}`
	body := func(model, extra, msgs string) string {
		if msgs == "" {
			msgs = user
		}
		return `{"model":"` + model + `","max_tokens":4000,"messages":[` + msgs + `]` + extra + `}`
	}
	const (
		s45  = "claude-sonnet-4-5"
		o47  = "claude-opus-4-7"
		s55  = "claude-sonnet-5-5"
		open = `{"type":"object","properties":{}}`
		shut = `{"type":"object","properties":{},"additionalProperties":false}`
	)
	strictTool := func(schema string) string {
		return `{"name":"f","strict":true,"input_schema":` + schema + `}`
	}
	image := func(src string) string {
		return `{"role":"user","content":[{"type":"image","source":` + src + `}]}`
	}
	cases := map[string]testCase{
		"json":                          {body: "{"},
		"known-fields":                  {body: body(s45, `,"seed":1`, "")},
		"known-model":                   {body: body("claude-nope", "", "")},
		"thinking-enabled-model":        {body: body(o47, `,"thinking":{"type":"enabled","budget_tokens":2000}`, "")},
		"thinking-budget-min":           {body: body(s45, `,"thinking":{"type":"enabled","budget_tokens":10}`, "")},
		"thinking-budget-below-max":     {body: body(s45, `,"thinking":{"type":"enabled","budget_tokens":5000}`, "")},
		"thinking-adaptive-model":       {body: body(s45, `,"thinking":{"type":"adaptive"}`, "")},
		"thinking-display":              {body: body(o47, `,"thinking":{"type":"adaptive","display":"full"}`, "")},
		"thinking-disabled-model":       {body: body(o47, `,"thinking":{"type":"disabled"}`, "")},
		"thinking-between-tools-model":  {body: body(o47, `,"thinking":{"type":"between_tools"}`, "")},
		"thinking-between-tools-effort": {body: body(s55, `,"thinking":{"type":"between_tools"},"output_config":{"effort":"max"}`, "")},
		"thinking-type":                 {body: body(s45, `,"thinking":{"type":"sometimes"}`, "")},
		"effort-levels":                 {body: body(s45, `,"output_config":{"effort":"high"}`, "")},
		"format-json-schema":            {body: body(s45, `,"output_config":{"format":{"type":"text"}}`, "")},
		"format-subset":                 {body: body(s45, `,"output_config":{"format":{"type":"json_schema","schema":`+open+`}}`, "")},
		"json-outputs-known": {body: body(s45, `,"output_config":{"format":{"type":"json_schema","schema":`+shut+`}}`, ""),
			setup: func(s *Server) { s.NoJSONOutputs = true }},
		"strict-known":            {body: body(s45, `,"tools":[`+strictTool(shut)+`]`, ""), setup: func(s *Server) { s.NoStrict = true }},
		"forced-tool-model":       {body: body(s55, `,"tools":[`+strictTool(shut)+`],"tool_choice":{"type":"any"}`, "")},
		"forced-tool-thinking":    {body: body(s45, `,"thinking":{"type":"enabled","budget_tokens":2000},"tools":[`+strictTool(shut)+`],"tool_choice":{"type":"any"}`, "")},
		"cache-control-ephemeral": {body: body(s45, `,"system":[{"type":"text","text":"s","cache_control":{"type":"forever"}}]`, "")},
		"strict-tool-subset":      {body: body(s45, `,"tools":[`+strictTool(open)+`]`, "")},
		"roles-alternate":         {body: body(s45, "", `{"role":"assistant","content":[{"type":"text","text":"hi"}]}`)},
		"cache-control-not-thinking": {body: body(s45, "",
			user+`,{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"x","cache_control":{"type":"ephemeral"}}]},`+user)},
		"redacted-data":       {body: body(s45, "", user+`,{"role":"assistant","content":[{"type":"redacted_thinking"}]},`+user)},
		"thinking-signed":     {body: body(s45, "", user+`,{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"forged"}]},`+user)},
		"tool-result-answers": {body: body(s45, "", `{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"x"}]}`)},
		"strict-complexity":   {body: body(s45, `,"tools":[`+strings.Repeat(strictTool(shut)+",", 20)+strictTool(shut)+`]`, "")},
		"cache-control-max": {body: body(s45, `,"system":[`+strings.Repeat(`{"type":"text","text":"s","cache_control":{"type":"ephemeral"}},`, 4)+
			`{"type":"text","text":"s","cache_control":{"type":"ephemeral"}}]`, "")},
		"thinking-blocks-kept": {body: body(s45, `,"thinking":{"type":"enabled","budget_tokens":2000}`,
			user+`,{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"x"}]}`)},
		"image-source":     {body: body(s45, "", image(`{"type":"gopher"}`))},
		"image-file-beta":  {body: body(s45, "", image(`{"type":"file","file_id":"file_x"}`))},
		"image-file-found": {body: body(s45, "", image(`{"type":"file","file_id":"file_x"}`)), beta: true},
		"image-file-type": {body: body(s45, "", image(`{"type":"file","file_id":"file_fake001"}`)), beta: true,
			setup: func(s *Server) {
				s.files.Add(File{Filename: "a.pdf", MIMEType: "application/pdf"}, func(int) string { return "file_fake001" })
			}},
	}
	fakekit.TestRules(t, rules, cases, func(t *testing.T, c testCase) string {
		s := NewServer()
		defer s.Close()
		if c.setup != nil {
			c.setup(s)
		}
		status := post(t, s, c.beta, c.body)
		reqs := s.Requests()
		if len(reqs) != 1 || reqs[0].Refused == "" || status < 400 {
			t.Fatalf("status %d, %d requests: not refused", status, len(reqs))
		}
		return reqs[0].Rule
	})
}

type testCase struct {
	body  string
	setup func(*Server)
	beta  bool
}

// post sends body to the fake's messages endpoint, with the Files API's
// beta header when beta, and returns the status.
func post(t *testing.T, s *Server, beta bool, body string) int {
	t.Helper()
	req, _ := http.NewRequest("POST", s.URL+"/v1/messages", strings.NewReader(body))
	req.Header.Set("Anthropic-Version", "2023-06-01")
	if beta {
		req.Header.Set("Anthropic-Beta", filesBeta)
	}
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
