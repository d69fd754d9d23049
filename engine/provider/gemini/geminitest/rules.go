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
	return c
}

// thinking is generationConfig.thinkingConfig, or the zero one.
func (c *call) thinking() (level string, budget *int) {
	if gc := c.b.GenerationConfig; gc != nil && gc.ThinkingConfig != nil {
		return gc.ThinkingConfig.ThinkingLevel, gc.ThinkingConfig.ThinkingBudget
	}
	return "", nil
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
			if _, ok := c.s.files.Get(uri); !ok {
				return fakekit.Refuse("File %s not exist in the Gemini API.", uri)
			}
			return nil
		})
	}},
	{Name: "file-data-type", Source: docFiles, Check: func(c *call) error {
		return c.fileData(func(uri, mime string) error {
			if f, ok := c.s.files.Get(uri); ok && f.MIMEType != mime {
				return fakekit.Refuse("fileData mimeType %s is not the file's %s (this fake's rule)", mime, f.MIMEType)
			}
			return nil
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
		if tc := c.b.ToolConfig; tc != nil && len(tc.FunctionCallingConfig.AllowedFunctionNames) > 0 && tc.FunctionCallingConfig.Mode != "ANY" {
			return fakekit.Refuse("allowed_function_names may only be set when mode is ANY")
		}
		return nil
	}},
	{Name: "allowed-names-declared", Source: docFunctions + "#function_calling_modes", Check: func(c *call) error {
		if tc := c.b.ToolConfig; tc != nil {
			for _, n := range tc.FunctionCallingConfig.AllowedFunctionNames {
				if !c.declared[n] {
					return fakekit.Refuse("allowed_function_names: %s is not a declared function", n)
				}
			}
		}
		return nil
	}},
	{Name: "json-schema-mime", Source: docStructured, Check: func(c *call) error {
		if gc := c.b.GenerationConfig; gc != nil && len(gc.ResponseJSONSchema) > 0 && gc.ResponseMIMEType != "application/json" {
			return fakekit.Refuse("response_json_schema requires response_mime_type to be application/json")
		}
		return nil
	}},
	{Name: "json-with-tools", Source: docStructured + "#structured_outputs_with_tools", Check: func(c *call) error {
		if gc := c.b.GenerationConfig; gc != nil && c.model.NoJSONWithTools && gc.ResponseMIMEType == "application/json" && len(c.declared) > 0 {
			return fakekit.Refuse("Function calling with a response mime type: 'application/json' is unsupported")
		}
		return nil
	}},
	{Name: "thinking-one-kind", Source: docThinking, Check: func(c *call) error {
		if level, budget := c.thinking(); level != "" && budget != nil {
			return fakekit.Refuse("thinking_budget and thinking_level are not supported together")
		}
		return nil
	}},
	{Name: "thinking-level-model", Source: docThinking, Check: func(c *call) error {
		if level, _ := c.thinking(); level != "" && c.model.Levels == nil {
			return fakekit.Refuse("thinking_level is not supported by this model")
		}
		return nil
	}},
	{Name: "thinking-level-value", Source: docThinking, Check: func(c *call) error {
		if level, _ := c.thinking(); level != "" && c.model.Levels != nil && !slices.Contains(c.model.Levels, level) {
			return fakekit.Refuse("thinking_level %q is not supported by this model", level)
		}
		return nil
	}},
	{Name: "thinking-budget-off", Source: docThinking, Check: func(c *call) error {
		if _, budget := c.thinking(); budget != nil && *budget == 0 && (c.model.NoOff || c.model.Levels != nil) {
			return fakekit.Refuse("Budget 0 is invalid. This model only works in thinking mode.")
		}
		return nil
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
