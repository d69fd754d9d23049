package outputspec

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// What the model is told for each way a stage takes its answer (DESIGN
// §15): by the tool, by reply, by both; with or without `unavailable`.
func TestContract_promptsForWays(t *testing.T) {
	c := mustCompile(t, Spec{Format: "json", Instructions: "Say whether it is safe."})
	for _, tt := range []struct {
		name string
		w    Ways
	}{
		{"tool_reply_unavailable", Ways{Tool: true, Reply: true, Unavailable: true}},
		{"reply_only", Ways{Reply: true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			b.WriteString("== ToolDescription\n")
			b.WriteString(c.ToolDescriptionFor(tt.w))
			b.WriteString("\n== SystemPrompt\n")
			b.WriteString(c.SystemPromptFor(tt.w))
			b.WriteString("\n")
			golden(t, "ways_"+tt.name, b.String())
		})
	}
	if c.SystemPromptFor(ToolWays) != c.SystemPrompt() || c.ToolDescriptionFor(ToolWays) != c.ToolDescription() {
		t.Error("SystemPrompt and ToolDescription are not the ToolWays variants")
	}
	reply := c.SystemPromptFor(Ways{Reply: true})
	if strings.Contains(reply, "submit_output") {
		t.Errorf("a model without tools is told of submit_output:\n%s", reply)
	}
	both := c.SystemPromptFor(Ways{Tool: true, Reply: true})
	if !strings.Contains(both, "or reply with the answer alone") {
		t.Error("a stage that takes replies does not say so")
	}
	// A model that calls tools is warned that its reply is taken as the
	// answer, so that it does not reply with a plan.
	if !strings.Contains(both, "A reply without a tool call ends your turn and is checked as the answer") {
		t.Errorf("a model with tools is not told that a reply is the answer:\n%s", both)
	}
}

func TestContract_Check_unavailable(t *testing.T) {
	c := mustCompile(t, Spec{Format: "json"})
	tests := []struct {
		args        string
		unavailable string
		refusal     string
	}{
		{`{"unavailable": " The file does not exist. "}`, "The file does not exist.", ""},
		{`{"unavailable": "gone", "content": ""}`, "gone", ""},
		{`{"unavailable": "gone", "content": null, "artifacts": []}`, "gone", ""},
		{`{"unavailable": "gone", "content": "{}"}`, "", `Give either "content" (the answer) or "unavailable" (why there is none), not both.`},
		{`{"unavailable": "  "}`, "", `"unavailable" is empty`},
		{`{"unavailable": 3}`, "", `"unavailable" must be a string`},
		{`{"unavailable": "gone", "artifacts": ["a.md"]}`, "", `"artifacts" go with an answer`},
		{`{"unavailable": null, "content": "{}"}`, "", ""},
	}
	for _, tt := range tests {
		for _, v := range []Verdict{
			c.Check(context.Background(), Submission{Args: json.RawMessage(tt.args)}),
			NewDesk(c).Submit(context.Background(), Submission{Args: json.RawMessage(tt.args)}),
		} {
			if v.Unavailable != tt.unavailable || !strings.Contains(v.Feedback, tt.refusal) || (tt.refusal != "" && v.Accepted) {
				t.Errorf("%s: unavailable %q, accepted %v, feedback %q; want unavailable %q, feedback %q", tt.args, v.Unavailable, v.Accepted, v.Feedback, tt.unavailable, tt.refusal)
			}
		}
	}
}

// The schema offered with `unavailable` agrees with parseArgs, except
// where only parseArgs can say that content and unavailable exclude each
// other (providers refuse a combinator at a tool schema's top level).
func TestContract_ToolSchemaFor_unavailable(t *testing.T) {
	c := mustCompile(t, Spec{Format: "text"})
	schema, err := compileSchema(c.ToolSchemaFor(Ways{Tool: true, Unavailable: true}))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args      string
		onlyCheck bool // valid by the schema, refused by parseArgs
	}{
		{`{"content": "x"}`, false},
		{`{"unavailable": "no data"}`, false},
		{`{"unavailable": ""}`, false},
		{`{"unavailable": 1}`, false},
		{`{"content": "x", "extra": 1}`, false},
		{`{}`, true},
		{`{"content": "x", "unavailable": "no data"}`, true},
	} {
		var data any
		if err := json.Unmarshal([]byte(tt.args), &data); err != nil {
			t.Fatal(err)
		}
		bySchema := schema.Validate(data) == nil
		_, problem := parseArgs(json.RawMessage(tt.args))
		byCheck := problem == ""
		if tt.onlyCheck {
			if !bySchema || byCheck {
				t.Errorf("%s: schema valid=%v, parseArgs valid=%v; want true, false", tt.args, bySchema, byCheck)
			}
			continue
		}
		if byCheck != bySchema {
			t.Errorf("%s: schema says valid=%v, parseArgs says %v (%q)", tt.args, bySchema, byCheck, problem)
		}
	}
}
