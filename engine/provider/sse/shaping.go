package sse

import "strings"

// Shaping says which of the mechanisms that shape an answer at the source
// (DESIGN §17) a request used: strict tools or a strict schema, a named
// tool choice, a constrained reply.
type Shaping struct {
	Strict     bool
	ToolChoice bool
	Reply      bool
	// Params are the stage's parameters the request carries, by the
	// field that carries each (provider.WithParams): a refusal that names
	// one is a MechanismError of ParamMechanism.
	Params map[string]string
}

// Mechanisms as llm.MechanismError names them.
const (
	MechanismStrict     = "strict"
	MechanismToolChoice = "tool_choice"
	MechanismReply      = "reply_format"
)

// refusalWords are what a server's error says when it refuses a mechanism,
// by mechanism, in the order they are tried: a reply-format error often
// speaks of strict mode too, a tool-choice error seldom of anything else.
// Sources: OpenAI's 400s ("Invalid schema for response_format 'answer'",
// "Invalid value for 'tool_choice'", "Invalid schema for function"), LM
// Studio's "'response_format.type' must be 'json_schema' or 'text'", Groq's
// "response_format json_schema is not supported with this model", Ollama's
// "invalid JSON schema in format", llama.cpp's grammar and json_schema
// errors ("JSON schema conversion failed", "Cannot use both json_schema and
// grammar"), vLLM's structured_outputs ("The provided JSON schema contains
// features not supported by xgrammar", "You can only use one kind of
// structured outputs constraint"), and Gemini's OpenAI endpoint's "Unknown
// name \"strict\"".
var refusalWords = []struct {
	mechanism string
	words     []string
}{
	{MechanismToolChoice, []string{"tool_choice", "tool choice"}},
	{MechanismReply, []string{"response_format", "text.format", "json_schema", "json_object", "structured output", "structured_outputs", "schema in format", "grammar", "xgrammar", "schema conversion"}},
	{MechanismStrict, []string{"strict", "invalid schema for function"}},
}

// refused is the mechanism e refuses, of those s used: a 400, 422 or
// 500 (llama.cpp answers some bad requests so) whose message or param names
// it; "" when it names none of them.
func (s Shaping) refused(e *StatusError) string {
	if e.Code != 400 && e.Code != 422 && e.Code != 500 || !s.Strict && !s.ToolChoice && !s.Reply {
		return ""
	}
	text := strings.ToLower(e.Message + " " + e.Param)
	for _, r := range refusalWords {
		used := r.mechanism == MechanismToolChoice && s.ToolChoice ||
			r.mechanism == MechanismReply && s.Reply ||
			r.mechanism == MechanismStrict && s.Strict
		if !used {
			continue
		}
		for _, w := range r.words {
			if strings.Contains(text, w) {
				return r.mechanism
			}
		}
	}
	return ""
}
