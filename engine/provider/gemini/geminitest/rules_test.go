package geminitest

import (
	"net/http"
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine/provider/internal/fakekit"
)

type testCase struct {
	model, body string
	setup       func(*Server)
}

// Every rule refuses a request that breaks it, under its own name.
func TestRules(t *testing.T) {
	const (
		user  = `{"role":"user","parts":[{"text":"hi"}]}`
		f     = `"tools":[{"functionDeclarations":[{"name":"f","parametersJsonSchema":{"type":"object"}}]}]`
		g25   = "gemini-2.5-flash"
		g3    = "gemini-3-pro-preview"
		asked = `{"role":"model","parts":[{"functionCall":{"name":"f","args":{}}}]}`
	)
	body := func(contents string, extra ...string) string {
		if contents == "" {
			contents = user
		}
		return `{"contents":[` + contents + `]` + strings.Join(append([]string{""}, extra...), ",") + `}`
	}
	thinking := func(cfg string) string { return `"generationConfig":{"thinkingConfig":` + cfg + `}` }
	file := func(uri, mime string) string {
		return `{"role":"user","parts":[{"fileData":{"fileUri":"` + uri + `","mimeType":"` + mime + `"}}]}`
	}
	cases := map[string]testCase{
		"request-size":       {model: g25, body: body(`{"role":"user","parts":[{"text":"` + strings.Repeat("x", maxRequest) + `"}]}`)},
		"known-model":        {model: "gemini-nope", body: body("")},
		"json":               {model: g25, body: "{"},
		"file-data-uploaded": {model: g25, body: body(file("https://files/nope", "image/png"))},
		"file-data-type": {model: g25, body: body(file("https://files/a", "image/jpeg")), setup: func(s *Server) {
			s.files.Add(fakekit.File{MIMEType: "image/png"}, func(int) string { return "https://files/a" })
		}},
		"parameters-one-kind":    {model: g25, body: body("", `"tools":[{"functionDeclarations":[{"name":"f","parametersJsonSchema":{},"parameters":{}}]}]`)},
		"allowed-names-mode":     {model: g25, body: body("", f, `"toolConfig":{"functionCallingConfig":{"mode":"AUTO","allowedFunctionNames":["f"]}}`)},
		"allowed-names-declared": {model: g25, body: body("", f, `"toolConfig":{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["g"]}}`)},
		"json-schema-mime":       {model: g25, body: body("", `"generationConfig":{"responseJsonSchema":{"type":"object"}}`)},
		"json-with-tools":        {model: g25, body: body("", f, `"generationConfig":{"responseMimeType":"application/json"}`)},
		"thinking-one-kind":      {model: g3, body: body("", thinking(`{"thinkingLevel":"low","thinkingBudget":100}`))},
		"thinking-level-model":   {model: g25, body: body("", thinking(`{"thinkingLevel":"low"}`))},
		"thinking-level-value":   {model: g3, body: body("", thinking(`{"thinkingLevel":"medium"}`))},
		"thinking-budget-off":    {model: "gemini-2.5-pro", body: body("", thinking(`{"thinkingBudget":0}`))},
		"roles":                  {model: g25, body: body(`{"role":"assistant","parts":[{"text":"hi"}]}`)},
		"responses-answer-calls": {model: g25, body: body(user+","+asked+","+user, f)},
		"thought-signatures":     {model: g3, body: body(user+","+asked+`,{"role":"user","parts":[{"functionResponse":{"name":"f","response":{}}}]}`, f)},
	}
	fakekit.TestRules(t, rules, cases, func(t *testing.T, c testCase) string {
		s := NewServer()
		defer s.Close()
		if c.setup != nil {
			c.setup(s)
		}
		resp, err := s.Client().Post(s.URL+"/models/"+c.model+":streamGenerateContent?alt=sse", "application/json", strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		reqs := s.Requests()
		if len(reqs) != 1 || reqs[0].Refused == "" || resp.StatusCode == http.StatusOK {
			t.Fatalf("status %d, %d requests: not refused", resp.StatusCode, len(reqs))
		}
		return reqs[0].Rule
	})
}
