package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine/blueprint"
	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/outputspec"
)

// shapesModel is a Model that takes the mechanisms it says.
type shapesModel struct{ shapes llm.Shapes }

func (shapesModel) Name() string { return "fake:m" }
func (shapesModel) Stream(context.Context, *llm.Request, func(llm.Delta) error) (*llm.Response, error) {
	return &llm.Response{}, nil
}
func (m shapesModel) Shapes(*llm.Request) llm.Shapes { return m.shapes }

func testAnswerShape(t *testing.T) *answerShape {
	t.Helper()
	c, err := outputspec.Compile(outputspec.Spec{Format: "json", Schema: map[string]any{
		"type": "object", "properties": map[string]any{"id": map[string]any{"type": "string"}},
		"required": []any{"id"}, "additionalProperties": false,
	}})
	if err != nil {
		t.Fatal(err)
	}
	return &answerShape{stage: &blueprint.Stage{Name: "answer", Mode: blueprint.ModeOutput}, contract: c, support: NewToolSupport(), notes: &notesKept{}}
}

// An answer call (nothing but submit_output offered) names submit_output
// as the tool to call, typed and strict where the API takes it; a working
// call does not; a call that cannot be forced says so in words, for that
// call alone.
func TestAnswerShape_shape(t *testing.T) {
	a := testAnswerShape(t)
	m := shapesModel{llm.Shapes{Strict: llm.StrictOpenAI, ToolChoice: true, Reply: true, ReplyAny: true}}
	submit := a.submitSpec()
	read := llm.ToolSpec{Name: "read_file"}

	req := &llm.Request{Tools: []llm.ToolSpec{submit}}
	a.shape("fake:m", m, req, true, false)
	if req.ToolChoice != blueprint.ToolSubmitOutput || !req.Tools[0].Strict || !a.shaped.typed || !a.shaped.forced {
		t.Fatalf("the answer call: tool choice %q, strict %v, shaped %+v", req.ToolChoice, req.Tools[0].Strict, a.shaped)
	}
	if cs, _ := a.callShape(); cs == nil || !cs.Forced || cs.Strict != llm.StrictOpenAI {
		t.Errorf("status.json's shape of the call = %+v", cs)
	}

	req = &llm.Request{Tools: []llm.ToolSpec{read, submit}}
	a.shape("fake:m", m, req, true, false)
	if req.ToolChoice != "" || a.shaped.forced || req.Reply != nil {
		t.Errorf("a working call was constrained: tool choice %q, reply %+v", req.ToolChoice, req.Reply)
	}

	a.support.refuse("fake:m", mechanismToolChoice)
	msgs := make([]llm.Message, 1, 4) // room to append in place
	msgs[0] = llm.Message{Role: llm.RoleUser, Text: "the task"}
	req = &llm.Request{Tools: []llm.ToolSpec{read, submit}, Messages: msgs}
	a.shape("fake:m", m, req, true, true) // after a nudge
	if req.ToolChoice != "" || len(req.Messages) != 2 || !strings.HasPrefix(req.Messages[1].Text, "Nothing else is left to do in this stage.") {
		t.Fatalf("an answer call that cannot be forced: tool choice %q, messages %+v", req.ToolChoice, req.Messages)
	}
	if msgs[:2][1].Text != "" {
		t.Error("the words for one call were written into the conversation's array")
	}

	req = &llm.Request{Tools: []llm.ToolSpec{submit}}
	a.shape("fake:m", m, req, false, true)
	if req.ToolChoice != "" {
		t.Error("a call of a visit that owes nothing was forced")
	}
}

// A model called without tools answers by reply, in the API's native
// JSON output where it has one, and is told so.
func TestAnswerShape_toolless(t *testing.T) {
	a := testAnswerShape(t)
	m := shapesModel{llm.Shapes{Strict: llm.StrictOpenAI, Reply: true, ReplyAny: true}}
	req := &llm.Request{}
	a.shape("fake:m", m, req, true, false)
	if req.Reply == nil || !a.shaped.reply {
		t.Fatalf("no native reply asked of a call without tools: %+v", a.shaped)
	}
	a.toolless = true
	if got, want := a.how("the answer"), "Reply with the answer alone, nothing before or after it"; got != want {
		t.Errorf("how = %q, want %q", got, want)
	}
	a.toolless = false
	if got, want := a.how("the answer"), "Call submit_output with the answer, or reply with it alone"; got != want {
		t.Errorf("how = %q, want %q", got, want)
	}
	if got := a.cutAnswer(12); !strings.Contains(got, "after 12 bytes: shorten it") {
		t.Errorf("cutAnswer = %q", got)
	}
}
