package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/llm"
)

// AskUser asks the user a question (DESIGN §22) through the workspace's
// engine.Asker: over ACP, elicitation/create; in `coda run`, the
// terminal. It is offered only where someone can answer (OfferedIn). The
// answer is the result, framed as data as every tool's is; a decline or a
// dismissal is a result too, not an error.
type AskUser struct{}

// askUserSchema is ask_user's arguments.
const askUserSchema = `{"type":"object","properties":{` +
	`"question":{"type":"string","description":"The question, as the user will read it."},` +
	`"choices":{"type":"array","items":{"type":"string"},"maxItems":20,"description":"Answers the user picks one of; leave out for a free answer."},` +
	`"fields":{"type":"object","description":"A small form instead: a JSON Schema object of string, number, integer, boolean or string-array properties."}` +
	`},"required":["question"],"additionalProperties":false}`

// Limits of what the model may ask: the user reads it, and the client
// shows it whole.
const (
	maxQuestion   = 4 << 10
	maxChoices    = 20
	maxChoice     = 200
	maxFields     = 16 << 10
	maxAnswerText = 64 << 10
)

type askUserArgs struct {
	Question string          `json:"question"`
	Choices  []string        `json:"choices"`
	Fields   json.RawMessage `json:"fields"`
}

func (AskUser) Spec() llm.ToolSpec {
	desc, err := descriptions.ReadFile("ask_user.md")
	if err != nil {
		panic("tools: ask_user has no description: " + err.Error())
	}
	return llm.ToolSpec{Name: "ask_user", Description: string(desc), Schema: json.RawMessage(askUserSchema)}
}

// Kind: the user is asked, nothing is changed.
func (AskUser) Kind() string { return "think" }

// OfferedIn: only where someone can answer.
func (AskUser) OfferedIn(ws engine.Workspace) bool {
	_, ok := engine.AskerOf(ws)
	return ok
}

func (AskUser) Title(args json.RawMessage) (string, []engine.Location) {
	var a askUserArgs
	if json.Unmarshal(args, &a) != nil || a.Question == "" {
		return "Ask the user", nil
	}
	q, _, _ := strings.Cut(a.Question, "\n")
	if len(q) > 80 {
		q = q[:77] + "…"
	}
	return "Ask: " + q, nil
}

func (AskUser) Run(ctx context.Context, call *engine.Call) engine.ToolResult {
	q, refusal := parseQuestion(call.Args)
	if refusal != "" {
		return engine.Errorf("ask_user: %s", refusal)
	}
	q.ToolCallID = call.ID
	asker, ok := engine.AskerOf(call.Workspace)
	if !ok {
		return engine.Errorf("ask_user: nobody can be asked here; go on with what you know")
	}
	reply, err := asker.Ask(ctx, q)
	if err != nil {
		if ctx.Err() != nil {
			return engine.Errorf("ask_user: the turn was cancelled")
		}
		return engine.Errorf("ask_user: the user could not be asked (%v); go on with what you know", err)
	}
	switch reply.Action {
	case engine.ReplyAccept:
		return engine.ToolResult{Output: answerText(q, reply.Content)}
	case engine.ReplyDecline:
		return engine.ToolResult{Output: "The user declined to answer. Go on with what you know, and say in your answer what is left open."}
	default:
		return engine.ToolResult{Output: "The user dismissed the question without answering. Go on with what you know, and say in your answer what is left open."}
	}
}

// parseQuestion checks the model's arguments: what is wrong is said for
// the model.
func parseQuestion(args json.RawMessage) (engine.Question, string) {
	var a askUserArgs
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return engine.Question{}, fmt.Sprintf("the arguments are not {question, choices?, fields?}: %v", err)
	}
	switch {
	case strings.TrimSpace(a.Question) == "":
		return engine.Question{}, "question is required"
	case len(a.Question) > maxQuestion:
		return engine.Question{}, fmt.Sprintf("question is %d bytes; ask in at most %d", len(a.Question), maxQuestion)
	case len(a.Choices) > maxChoices:
		return engine.Question{}, fmt.Sprintf("%d choices; offer at most %d", len(a.Choices), maxChoices)
	case len(a.Choices) > 0 && len(a.Fields) > 0:
		return engine.Question{}, "give choices or fields, not both"
	case len(a.Fields) > maxFields:
		return engine.Question{}, fmt.Sprintf("fields is %d bytes; keep the form under %d", len(a.Fields), maxFields)
	}
	for _, c := range a.Choices {
		if c == "" || len(c) > maxChoice {
			return engine.Question{}, fmt.Sprintf("each choice must be 1 to %d bytes", maxChoice)
		}
	}
	q := engine.Question{Message: a.Question, Choices: a.Choices}
	if len(a.Fields) > 0 && !bytes.Equal(bytes.TrimSpace(a.Fields), []byte("null")) {
		if reason := checkFields(a.Fields); reason != "" {
			return engine.Question{}, "fields: " + reason
		}
		q.Fields = a.Fields
	}
	return q, ""
}

// checkFields holds a form to what an elicitation takes: an object whose
// properties are flat.
func checkFields(raw json.RawMessage) string {
	var form struct {
		Type       string                     `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(raw, &form); err != nil {
		return "not a JSON Schema object: " + err.Error()
	}
	if form.Type != "" && form.Type != "object" {
		return `its type must be "object"`
	}
	if len(form.Properties) == 0 {
		return "it names no properties"
	}
	for name, p := range form.Properties {
		var prop struct {
			Type  string `json:"type"`
			Items *struct {
				Type string `json:"type"`
			} `json:"items"`
		}
		if err := json.Unmarshal(p, &prop); err != nil {
			return fmt.Sprintf("property %s: %v", name, err)
		}
		switch prop.Type {
		case "string", "number", "integer", "boolean":
		case "array":
			if prop.Items == nil || prop.Items.Type != "string" {
				return fmt.Sprintf("property %s: an array must be of strings", name)
			}
		default:
			return fmt.Sprintf("property %s: type %q; a form takes string, number, integer, boolean or an array of strings", name, prop.Type)
		}
	}
	return ""
}

// answerText is an accepted answer as the model reads it: the text alone
// for a one-field question, else the fields as JSON.
func answerText(q engine.Question, content map[string]any) string {
	if len(q.Fields) == 0 {
		if s, ok := content["answer"].(string); ok {
			return "The user answered: " + cut(s)
		}
	}
	b, err := json.Marshal(content)
	if err != nil {
		return "The user answered, but the answer could not be read."
	}
	return "The user answered: " + cut(string(b))
}

func cut(s string) string {
	if len(s) <= maxAnswerText {
		return s
	}
	return s[:maxAnswerText] + fmt.Sprintf(" […%d more bytes]", len(s)-maxAnswerText)
}
