package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/outputspec"
)

// A shaper is a scripted model that says which mechanisms it takes, as a
// provider does (llm.Shaper), and records what it was sent; with
// refuse set, a request that uses that mechanism is refused as a server
// refuses it (a 400 naming it).
type shaper struct {
	llm.Model
	shapes llm.Shapes
	refuse string // "strict", "tool_choice", "reply_format"

	mu      sync.Mutex
	reqs    []llm.Request
	refused int
}

func (s *shaper) Shapes(*llm.Request) llm.Shapes { return s.shapes }

func (s *shaper) Stream(ctx context.Context, req *llm.Request, onDelta func(llm.Delta) error) (*llm.Response, error) {
	s.mu.Lock()
	cp := *req
	cp.Messages = slices.Clone(req.Messages)
	cp.Tools = slices.Clone(req.Tools)
	s.reqs = append(s.reqs, cp)
	uses := map[string]bool{
		"strict":       slices.ContainsFunc(req.Tools, func(t llm.ToolSpec) bool { return t.Strict }) || req.Reply != nil && req.Reply.Strict,
		"tool_choice":  req.ToolChoice != "",
		"reply_format": req.Reply != nil,
	}
	refuse := s.refuse != "" && uses[s.refuse]
	if refuse {
		s.refused++
	}
	s.mu.Unlock()
	if refuse {
		return nil, &llm.MechanismError{Mechanism: s.refuse, Err: errors.New("script:test: HTTP 400 Bad Request: " + s.refuse + " is not supported by this server")}
	}
	return s.Model.Stream(ctx, req, onDelta)
}

func (s *shaper) requests() []llm.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs)
}

// An OpenAI-like API: strict tools and schemas, a named tool choice,
// JSON replies with or without a schema.
var openaiLike = llm.Shapes{Strict: outputspec.StrictOpenAI, ToolChoice: true, Reply: true, ReplyAny: true}

const closedJSON = `format = "json"
schema = { type = "object", additionalProperties = false, required = ["safe", "issues"], properties = { safe = { type = "boolean" }, issues = { type = "array", items = { type = "string" } } } }
`

func shaped(t *testing.T, blueprint, model string, shapes llm.Shapes) (*testTurn, *shaper) {
	t.Helper()
	turn := newTurn(t, blueprint, model)
	sh := &shaper{Model: turn.Models.(oneModel).m, shapes: shapes}
	turn.Models = oneModel{sh}
	return turn, sh
}

// submitOf is the submit_output tool a request offered.
func submitOf(t *testing.T, req llm.Request) llm.ToolSpec {
	t.Helper()
	for _, tool := range req.Tools {
		if tool.Name == "submit_output" {
			return tool
		}
	}
	t.Fatalf("no submit_output in %d tools", len(req.Tools))
	return llm.ToolSpec{}
}

// contentType is the type submit_output's content is given.
func contentType(t *testing.T, tool llm.ToolSpec) any {
	t.Helper()
	var s struct {
		Properties struct {
			Content map[string]any `json:"content"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(tool.Schema, &s); err != nil {
		t.Fatal(err)
	}
	if branches, ok := s.Properties.Content["anyOf"].([]any); ok {
		// The strict form beside unavailable: the answer, or null.
		return branches[0].(map[string]any)["type"]
	}
	return s.Properties.Content["type"]
}

// An output stage that offers only submit_output: every call is the answer
// call, forced; the tool is typed with the answer's schema and strict, as
// it fits; the answer is the value's own bytes.
func TestShape_forcedTypedStrict(t *testing.T) {
	turn, sh := shaped(t, answerStage+"[stages.answer.output]\n"+closedJSON, `
[[turn]]
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = { safe = true, issues = ["naming"] } }
`, openaiLike)
	res := runTurn(context.Background(), turn, &events{})
	ended(t, res, engine.StatusAnswered, "end_turn")
	if res.Answer.Content != `{"issues":["naming"],"safe":true}` {
		t.Errorf("answer %q", res.Answer.Content)
	}
	req := sh.requests()[0]
	tool := submitOf(t, req)
	if req.ToolChoice != "submit_output" || !tool.Strict || contentType(t, tool) != "object" || req.Reply != nil {
		t.Errorf("tool choice %q, strict %v, content %v, reply %v", req.ToolChoice, tool.Strict, contentType(t, tool), req.Reply)
	}
}

// prompted is today's behaviour: a string content, nothing strict, nothing
// forced; the provider's setting caps the stage's the same way.
func TestShape_prompted(t *testing.T) {
	for _, how := range []string{"spec", "provider"} {
		bp := answerStage + "[stages.answer.output]\n" + closedJSON
		if how == "spec" {
			bp += "structured = \"prompted\"\n"
		}
		turn, sh := shaped(t, bp, `
[[turn]]
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = '{"safe": true, "issues": []}' }
`, openaiLike)
		if how == "provider" {
			turn.ModelFacts = func(string) llm.ModelFact { return llm.ModelFact{Structured: "prompted"} }
		}
		res := runTurn(context.Background(), turn, &events{})
		ended(t, res, engine.StatusAnswered, "end_turn")
		req := sh.requests()[0]
		tool := submitOf(t, req)
		if req.ToolChoice != "" || tool.Strict || contentType(t, tool) != "string" || req.Reply != nil {
			t.Errorf("%s: tool choice %q, strict %v, content %v, reply %v", how, req.ToolChoice, tool.Strict, contentType(t, tool), req.Reply)
		}
	}
}

// A schema that has no faithful strict projection (it requires a member
// its properties do not describe) is never sent strict: the tool is typed,
// forced, and loose.
func TestShape_notFitNotStrict(t *testing.T) {
	turn, sh := shaped(t, answerStage+`[stages.answer.output]
format = "json"
schema = { type = "object", required = ["safe", "x"], properties = { safe = { type = "boolean" }, tags = { type = "array" } } }
`, `
[[turn]]
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = { safe = true, x = 1 } }
`, openaiLike)
	res := runTurn(context.Background(), turn, &events{})
	ended(t, res, engine.StatusAnswered, "end_turn")
	tool := submitOf(t, sh.requests()[0])
	if tool.Strict || contentType(t, tool) != "object" {
		t.Errorf("strict %v, content %v", tool.Strict, contentType(t, tool))
	}
	if strings.Contains(string(tool.Schema), `["string","null"]`) {
		t.Errorf("a loose tool in the strict form: %s", tool.Schema)
	}
}

// A schema that does not fit the strict subset as written is sent as its
// projection, strict (every property required, the optional ones
// nullable); the answer, given under it, has coda's null taken out before
// it is checked against the schema as written and recorded.
func TestShape_projectedStrict(t *testing.T) {
	turn, sh := shaped(t, answerStage+`[stages.answer.output]
format = "json"
schema = { type = "object", additionalProperties = false, required = ["safe"], properties = { safe = { type = "boolean" }, tags = { type = "array", items = { type = "string" } } } }
`, `
[[turn]]
[[turn.tool_calls]]
name = "submit_output"
raw_arguments = '{"content": {"safe": true, "tags": null}, "artifacts": null, "unavailable": null}'
`, openaiLike)
	res := runTurn(context.Background(), turn, &events{})
	ended(t, res, engine.StatusAnswered, "end_turn")
	tool := submitOf(t, sh.requests()[0])
	if !tool.Strict || !strings.Contains(string(tool.Schema), `"required":["safe","tags"]`) || !strings.Contains(string(tool.Schema), `{"type":"null"}`) {
		t.Fatalf("strict %v, schema %s", tool.Strict, tool.Schema)
	}
	if got := res.Answer.Content; got != `{"safe":true}` {
		t.Errorf("answer %s; want coda's null taken out", got)
	}
	// The record keeps what was sent beside the schema as written, and
	// how each call asked for the shape.
	b, err := os.ReadFile(recordPath(turn, "stages/001-answer@1/status.json"))
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		SchemaSent string `json:"schemaSent"`
		Calls      []struct {
			Shape struct {
				Strict    string   `json:"strict"`
				Projected []string `json:"projected"`
			} `json:"shape"`
		} `json:"calls"`
	}
	if err := json.Unmarshal(b, &st); err != nil || st.SchemaSent != engine.SchemaSentFile || len(st.Calls) != 1 ||
		st.Calls[0].Shape.Strict != "openai" || !slices.Equal(st.Calls[0].Shape.Projected, []string{"submit_output"}) {
		t.Errorf("status.json: %s", b)
	}
	b, err = os.ReadFile(recordPath(turn, "stages/001-answer@1/"+engine.SchemaSentFile))
	var sent []struct {
		Mechanism, Family string
		Original, Sent    json.RawMessage
	}
	compact := func(raw json.RawMessage) string {
		var b strings.Builder
		var buf bytes.Buffer
		json.Compact(&buf, raw)
		b.Write(buf.Bytes())
		return b.String()
	}
	if err != nil || json.Unmarshal(b, &sent) != nil || len(sent) != 1 || sent[0].Mechanism != "submit_output" || sent[0].Family != "openai" ||
		!strings.Contains(compact(sent[0].Original), `"required":["safe"]`) || !strings.Contains(compact(sent[0].Sent), `"required":["safe","tags"]`) {
		t.Errorf("%s: %s (%v)", engine.SchemaSentFile, b, err)
	}
}

// Where the API cannot force the tool, the request says it in words (only
// for that call) and asks for the reply in native JSON as well; a reply
// is then checked as the answer.
func TestShape_unforceable(t *testing.T) {
	turn, sh := shaped(t, answerStage+"[stages.answer.output]\n"+closedJSON, `
[[turn]]
text = "Let me look first."

[[turn]]
text = '{"safe": false, "issues": ["a"]}'
`, llm.Shapes{Reply: true})
	res := runTurn(context.Background(), turn, &events{})
	ended(t, res, engine.StatusAnswered, "end_turn")
	reqs := sh.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d calls", len(reqs))
	}
	for i, req := range reqs {
		last := req.Messages[len(req.Messages)-1].Text
		if req.ToolChoice != "" || req.Reply == nil || req.Reply.Strict || !strings.Contains(last, "Nothing else is left to do in this stage") {
			t.Errorf("call %d: tool choice %q, reply %+v, last message %q", i, req.ToolChoice, req.Reply, last)
		}
	}
	for _, m := range reqs[1].Messages[:len(reqs[1].Messages)-1] {
		if strings.Contains(m.Text, "Nothing else is left") {
			t.Errorf("the words stayed in the conversation: %q", m.Text)
		}
	}
}

// A model called without tools asks for its reply in native JSON, strict
// where the schema fits; a JSON answer without a schema asks for any JSON.
func TestShape_toollessReply(t *testing.T) {
	for _, tt := range []struct {
		name, output string
		schema       bool
	}{
		{"schema", closedJSON, true},
		{"any JSON", "format = \"json\"\n", false},
	} {
		turn, sh := shaped(t, answerStage+"[stages.answer.output]\n"+tt.output, `
tools = false
[[turn]]
text = '{"safe": true, "issues": []}'
`, openaiLike)
		res := runTurn(context.Background(), turn, &events{})
		ended(t, res, engine.StatusAnswered, "end_turn")
		reqs := sh.requests()
		last := reqs[len(reqs)-1]
		if last.Reply == nil || (last.Reply.Schema != nil) != tt.schema || last.Reply.Strict != tt.schema || len(last.Tools) != 0 {
			t.Errorf("%s: reply %+v, %d tools", tt.name, last.Reply, len(last.Tools))
		}
	}
}

// A server that refuses a mechanism has the call made again without it,
// with one warning; the session remembers, so the next turn asks without
// it from the start.
func TestShape_mechanismRefused(t *testing.T) {
	for _, mech := range []string{"strict", "tool_choice"} {
		support := engine.NewToolSupport()
		for turnNo := 0; turnNo < 2; turnNo++ {
			turn, sh := shaped(t, answerStage+"[stages.answer.output]\n"+closedJSON, `
[[turn]]
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = { safe = true, issues = [] } }
`, openaiLike)
			sh.refuse = mech
			turn.ToolSupport = support
			res := runTurn(context.Background(), turn, &events{})
			ended(t, res, engine.StatusAnswered, "end_turn")
			reqs := sh.requests()
			want := 2 // refused, then without it
			if turnNo == 1 {
				want = 1
			}
			if len(reqs) != want || sh.refused != want-1 {
				t.Errorf("%s, turn %d: %d requests, %d refused", mech, turnNo, len(reqs), sh.refused)
			}
			warnedNow := slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "coda asks it without for the rest of the session") })
			if warnedNow != (turnNo == 0) {
				t.Errorf("%s, turn %d: warnings %q", mech, turnNo, res.Warnings)
			}
			if !support.Refuses("script:test", mech) {
				t.Errorf("%s: not remembered", mech)
			}
			final := reqs[len(reqs)-1]
			tool := submitOf(t, final)
			if mech == "strict" && (tool.Strict || final.ToolChoice == "") || mech == "tool_choice" && (final.ToolChoice != "" || !tool.Strict) {
				t.Errorf("%s, turn %d: the last call: strict %v, tool choice %q", mech, turnNo, tool.Strict, final.ToolChoice)
			}
		}
	}
}

// A stage with other tools is not forced while it works; the call after a
// nudge is.
func TestShape_forcedAfterNudge(t *testing.T) {
	turn, sh := shaped(t, answerStage+`available_tools = ["noop"]
answer_from_reply = false
[stages.answer.output]
`+closedJSON, `
[[turn]]
text = "Working on it."

[[turn]]
expect = "You have not submitted the answer yet"
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = { safe = true, issues = [] } }
`, openaiLike)
	turn.Engine.Tools = map[string]engine.Tool{"noop": noop{}}
	res := runTurn(context.Background(), turn, &events{})
	ended(t, res, engine.StatusAnswered, "end_turn")
	reqs := sh.requests()
	if len(reqs) != 2 || reqs[0].ToolChoice != "" || reqs[1].ToolChoice != "submit_output" {
		t.Errorf("tool choices %q", func() (out []string) {
			for _, r := range reqs {
				out = append(out, r.ToolChoice)
			}
			return
		}())
	}
}

// A reply's leading think block streams as a thought and is dropped
// before the reply is checked as the answer.
func TestRun_thinkBlock(t *testing.T) {
	turn, _ := shaped(t, answerStage+"[stages.answer.output]\n"+closedJSON, `
tools = false
[[turn]]
text = ["<thi", "nk>The module looks ", "safe.</thi", "nk>\n\n", "{\"safe\": true, \"issues\": []}"]
`, llm.Shapes{})
	sink := &events{}
	res := runTurn(context.Background(), turn, sink)
	ended(t, res, engine.StatusAnswered, "end_turn")
	var thought, text strings.Builder
	for _, ev := range sink.evs {
		switch ev.Kind {
		case engine.EventThought:
			thought.WriteString(ev.Text)
		case engine.EventText:
			text.WriteString(ev.Text)
		}
	}
	if thought.String() != "The module looks safe." || text.String() != `{"safe": true, "issues": []}` {
		t.Errorf("thought %q, text %q", thought.String(), text.String())
	}
	if res.Answer.Content != `{"safe": true, "issues": []}` {
		t.Errorf("answer %q", res.Answer.Content)
	}
}

// The last repair is forced: once the refusals reach max_repairs, the next
// call names submit_output. And a strict call's answer is checked all the
// same: a provider's promise of the shape records nothing unchecked.
func TestShape_lastRepairForced(t *testing.T) {
	turn, sh := shaped(t, answerStage+`available_tools = ["noop"]
max_repairs = 1
[stages.answer.output]
`+closedJSON, `
[[turn]]
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = { safe = true } }

[[turn]]
expect = "does not satisfy the JSON Schema"
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = { safe = true, issues = [] } }
`, openaiLike)
	turn.Engine.Tools = map[string]engine.Tool{"noop": noop{}}
	res := runTurn(context.Background(), turn, &events{})
	ended(t, res, engine.StatusAnswered, "end_turn")
	reqs := sh.requests()
	if len(reqs) != 2 || reqs[0].ToolChoice != "" || reqs[1].ToolChoice != "submit_output" {
		t.Errorf("%d calls; tool choices %q, %q", len(reqs), reqs[0].ToolChoice, reqs[len(reqs)-1].ToolChoice)
	}
}

// A keyword the projection leaves out (Anthropic's strict subset takes no
// minimum) is said in the field's description and still held by coda's
// check: an answer that breaks it is refused, and the repair loop has it
// repaired. The schema is a real one (testdata/jsonschemabench).
func TestShape_projectedDroppedRepaired(t *testing.T) {
	file, err := filepath.Abs("../testdata/jsonschemabench/Github_easy/o90351.json")
	if err != nil {
		t.Fatal(err)
	}
	turn, sh := shaped(t, answerStage+`[stages.answer.output]
format = "json"
schema_file = '`+file+`'
`, `
[[turn]]
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = { minNodes = 0, maxNodes = 5, enabled = true } }

[[turn]]
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = { minNodes = 1, maxNodes = 5, enabled = true } }
`, llm.Shapes{Strict: outputspec.StrictAnthropic, ToolChoice: true, Reply: true})
	res := runTurn(context.Background(), turn, &events{})
	ended(t, res, engine.StatusAnswered, "end_turn")
	reqs := sh.requests()
	tool := submitOf(t, reqs[0])
	if !tool.Strict || strings.Contains(string(tool.Schema), `"minimum"`) || !strings.Contains(string(tool.Schema), "Also: minimum 1.") {
		t.Errorf("strict %v, schema %s", tool.Strict, tool.Schema)
	}
	if len(reqs) != 2 || !strings.Contains(reqs[1].Messages[len(reqs[1].Messages)-1].Text, "minNodes") {
		t.Errorf("%d requests; the refusal: %+v", len(reqs), reqs[len(reqs)-1].Messages[len(reqs[len(reqs)-1].Messages)-1])
	}
	if got := res.Answer.Content; got != `{"enabled":true,"maxNodes":5,"minNodes":1}` { // the script writes its members in order
		t.Errorf("answer %s", got)
	}
}
