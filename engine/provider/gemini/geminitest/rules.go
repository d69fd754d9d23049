package geminitest

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/coda-acp/coda/engine/provider/internal/fakekit"
)

// A call is one generateContent request as the rules read it.
type call struct {
	s        *Server
	req      *Request
	b        *Body
	model    Model
	known    bool  // the model is one the fake knows
	invalid  error // why the body is not JSON, or nil
	declared map[string]bool
	// toolConfig's mode and allowed names; generationConfig's reply type,
	// whether it has a schema, and its thinking level and budget
	mode, mime, level string
	allowed           []string
	jsonSchema        bool
	budget            *int
}

func (s *Server) call(req *Request) *call {
	model, known := fakekit.Known(s.Models, Models, req.Model)
	c := &call{s: s, req: req, b: &req.Body, model: model, known: known, declared: map[string]bool{}}
	c.invalid = json.Unmarshal(req.Raw, &req.Body)
	for _, ts := range req.Body.Tools {
		for _, d := range ts.FunctionDeclarations {
			c.declared[d.Name] = true
		}
	}
	if tc := req.Body.ToolConfig; tc != nil {
		c.mode, c.allowed = tc.FunctionCallingConfig.Mode, tc.FunctionCallingConfig.AllowedFunctionNames
	}
	if gc := req.Body.GenerationConfig; gc != nil {
		c.mime, c.jsonSchema = gc.ResponseMIMEType, len(gc.ResponseJSONSchema) > 0
		if tc := gc.ThinkingConfig; tc != nil {
			c.level, c.budget = tc.ThinkingLevel, tc.ThinkingBudget
		}
	}
	return c
}

// current is the index of the current turn's first content: the last
// user content that is not only function responses.
func (c *call) current() int {
	current := 0
	for i, ct := range c.b.Contents {
		if ct.Role == "user" && slices.ContainsFunc(ct.Parts, func(p Part) bool { return p.FunctionResponse == nil }) {
			current = i
		}
	}
	return current
}

// calls counts ct's function calls, or, with responses, its function
// responses.
func count(ct Content, responses bool) int {
	n := 0
	for _, p := range ct.Parts {
		if !responses && p.FunctionCall != nil || responses && p.FunctionResponse != nil {
			n++
		}
	}
	return n
}

// The documents the rules cite.
const (
	docGenerate   = "https://ai.google.dev/api/generate-content#method:-models.streamgeneratecontent"
	docFiles      = "https://ai.google.dev/gemini-api/docs/files"
	docFunctions  = "https://ai.google.dev/gemini-api/docs/function-calling"
	docStructured = "https://ai.google.dev/gemini-api/docs/structured-output"
	docThinking   = "https://ai.google.dev/gemini-api/docs/thinking"
	docSignatures = "https://ai.google.dev/gemini-api/docs/thought-signatures"
)

// rules are what streamGenerateContent holds a request to, in the order
// it is checked (the package's doc says each in words).
var rules = []fakekit.Rule[*call]{
	{Name: "request-size", Source: docFiles, Check: func(c *call) error {
		return fakekit.If(len(c.req.Raw) > maxRequest, "Request payload size exceeds the limit: %d bytes.", maxRequest)
	}},
	{Name: "known-model", Source: "https://ai.google.dev/api/models#method:-models.list", Check: func(c *call) error {
		if !c.known {
			return &fakekit.Refusal{Status: 404, Type: "NOT_FOUND", Msg: fmt.Sprintf("models/%s is not found for API version v1beta, or is not supported for generateContent. Call ListModels to see the list of available models and their supported methods.", c.req.Model)}
		}
		return nil
	}},
	{Name: "json", Source: docGenerate, Check: func(c *call) error {
		return fakekit.If(c.invalid != nil, "Invalid JSON payload received. %v", c.invalid)
	}},
	{Name: "file-data-uploaded", Source: docFiles, Check: func(c *call) error {
		return c.fileData(func(uri, mime string) error {
			_, ok := c.s.files.Get(uri)
			return fakekit.If(!ok, "File %s not exist in the Gemini API.", uri)
		})
	}},
	{Name: "file-data-type", Source: docFiles, Check: func(c *call) error {
		return c.fileData(func(uri, mime string) error {
			f, ok := c.s.files.Get(uri)
			return fakekit.If(ok && f.MIMEType != mime, "fileData mimeType %s is not the file's %s (this fake's rule)", mime, f.MIMEType)
		})
	}},
	{Name: "parameters-one-kind", Source: docFunctions, Check: func(c *call) error {
		for _, ts := range c.b.Tools {
			for _, d := range ts.FunctionDeclarations {
				if len(d.ParametersJSONSchema) > 0 && len(d.Parameters) > 0 {
					return fakekit.Refuse("parameters and parameters_json_schema cannot both be set")
				}
			}
		}
		return nil
	}},
	{Name: "allowed-names-mode", Source: docFunctions + "#function_calling_modes", Check: func(c *call) error {
		return fakekit.If(len(c.allowed) > 0 && c.mode != "ANY", "allowed_function_names may only be set when mode is ANY")
	}},
	{Name: "allowed-names-declared", Source: docFunctions + "#function_calling_modes", Check: func(c *call) error {
		for _, n := range c.allowed {
			if !c.declared[n] {
				return fakekit.Refuse("allowed_function_names: %s is not a declared function", n)
			}
		}
		return nil
	}},
	{Name: "json-schema-mime", Source: docStructured, Check: func(c *call) error {
		return fakekit.If(c.jsonSchema && c.mime != "application/json", "response_json_schema requires response_mime_type to be application/json")
	}},
	{Name: "json-with-tools", Source: docStructured + "#structured_outputs_with_tools", Check: func(c *call) error {
		return fakekit.If(c.model.NoJSONWithTools && c.mime == "application/json" && len(c.declared) > 0, "Function calling with a response mime type: 'application/json' is unsupported")
	}},
	{Name: "thinking-one-kind", Source: docThinking, Check: func(c *call) error {
		return fakekit.If(c.level != "" && c.budget != nil, "thinking_budget and thinking_level are not supported together")
	}},
	{Name: "thinking-level-model", Source: docThinking, Check: func(c *call) error {
		return fakekit.If(c.level != "" && c.model.Levels == nil, "thinking_level is not supported by this model")
	}},
	{Name: "thinking-level-value", Source: docThinking, Check: func(c *call) error {
		return fakekit.If(c.level != "" && c.model.Levels != nil && !slices.Contains(c.model.Levels, c.level), "thinking_level %q is not supported by this model", c.level)
	}},
	{Name: "thinking-budget-off", Source: docThinking, Check: func(c *call) error {
		return fakekit.If(c.budget != nil && *c.budget == 0 && (c.model.NoOff || c.model.Levels != nil), "Budget 0 is invalid. This model only works in thinking mode.")
	}},
	{Name: "roles", Source: docGenerate, Check: func(c *call) error {
		for i, ct := range c.b.Contents {
			if ct.Role != "user" && ct.Role != "model" {
				return fakekit.Refuse("Please use a valid role: user, model. (contents[%d].role %q)", i, ct.Role)
			}
			if len(ct.Parts) == 0 {
				return fakekit.Refuse("contents[%d].parts: must not be empty", i)
			}
		}
		return nil
	}},
	{Name: "responses-answer-calls", Source: docFunctions, Check: func(c *call) error {
		for i, ct := range c.b.Contents {
			if calls := count(ct, false); calls > 0 && i+1 < len(c.b.Contents) && count(c.b.Contents[i+1], true) != calls {
				return fakekit.Refuse("Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.")
			}
		}
		return nil
	}},
	{Name: "thought-signatures", Source: docSignatures, Check: signatures},
}

// fileData calls f with each fileData part's URI and type, until one
// errs.
func (c *call) fileData(f func(uri, mime string) error) error {
	for _, ct := range c.b.Contents {
		for _, p := range ct.Parts {
			if fd := p.FileData; fd != nil {
				if err := f(fd.FileURI, fd.MIMEType); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// signatures: on a model that validates them, the first function call of
// each model step of the current turn carries this server's signature for
// the model, or the documented skip value.
func signatures(c *call) error {
	if !c.model.Signs {
		return nil
	}
	for i, ct := range c.b.Contents[c.current():] {
		i += c.current()
		at := slices.IndexFunc(ct.Parts, func(p Part) bool { return p.FunctionCall != nil })
		if at < 0 {
			continue
		}
		first := ct.Parts[at]
		switch sig := first.ThoughtSignature; {
		case sig == "":
			return fakekit.Refuse("Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:%s` , position %d. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.", first.FunctionCall.Name, i+1)
		case sig != SkipSignature && !c.s.signedFor(sig, c.req.Model):
			return fakekit.Refuse("Corrupted thought signature.")
		}
	}
	return nil
}

// signedFor reports whether this server gave sig, from model.
func (s *Server) signedFor(sig, model string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.signed[sig] == model
}
