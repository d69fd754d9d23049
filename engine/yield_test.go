package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/outputspec"
	"github.com/coda-acp/coda/outputspec/projection/projectiontest"
)

// The yield benchmark (DESIGN §15): scripted models that fail the ways real
// ones do, against every format, through the whole engine. It measures
// answers per turn, repairs (refused submissions) per answer and model
// calls per answer:
//
//	go test ./engine -run '^$' -bench Yield
//
// TestYield holds the target: every scripted model that eventually says
// something valid ends answered, within 3 repairs.

// A yieldFormat is an answer format with a valid answer and the wrong
// ones models give.
type yieldFormat struct {
	name, keys string // keys: the [stages.answer.output] table's
	valid      string
	wrong      string // another format's answer, or a broken one
	missing    string // valid but for a field the schema requires; "" when there is no schema
	// fromSchema: a constrained decoder writes the least value of the
	// schema it is sent (projectiontest.Minimal), not valid: the answer
	// comes back through the projection's Back.
	fromSchema bool
}

// laxFormats are the formats whose checks take some mistakes as answers,
// and why: the table marks such an answer "as-is".
var laxFormats = map[string]string{
	"markdown": "prose is Markdown: a preamble or a sentence of chatter passes",
	"csv":      "a sentence without commas is a one-field CSV row",
}

var yieldFormats = []yieldFormat{
	{name: "json", keys: `format = "json"` + "\n" + `schema = { type = "object", required = ["safe", "issues"], properties = { safe = { type = "boolean" }, issues = { type = "array" } } }`,
		valid: `{"safe": true, "issues": []}`, wrong: "safe: true\nissues: []", missing: `{"safe": true}`},
	{name: "xml", keys: `format = "xml"`, valid: `<review safe="true"><issue severity="low">naming</issue></review>`, wrong: `{"safe": true}`},
	{name: "csv", keys: `format = "csv"`, valid: "file,severity\nauth.go,high\ndb.go,low", wrong: `{"safe": true}`},
	{name: "yaml", keys: `format = "yaml"`, valid: "safe: true\nissues: []", wrong: `{"safe": true}`},
	{name: "toml", keys: `format = "toml"`, valid: "safe = true\nissues = []", wrong: `{"safe": true}`},
	{name: "markdown", keys: `format = "markdown"`, valid: "# Verdict\n\nThe module is safe.", wrong: "```\nThe module is safe."},
}

// A yieldModel is a scripted model: the turns it plays for a format, and
// whether it eventually says something valid. Toolless models are played
// by a server that refuses tools.
type yieldModel struct {
	name     string
	toolless bool
	turns    func(f yieldFormat) []yturn // nil: not applicable to f
	valid    bool                        // eventually says something valid
}

// A yturn is one call's reply as the model means it: a submission or a
// reply with text, or either cut at the token limit (cut: what it had
// written).
type yturn struct {
	submit bool
	text   string
	cut    bool
}

func submit(content string) yturn { return yturn{submit: true, text: content} }
func reply(text string) yturn     { return yturn{text: text} }

// toml is the turn as the script model plays it.
func (t yturn) toml() string {
	switch {
	case t.submit && t.cut:
		return "[[turn]]\nstop_reason = \"max_tokens\"\n[[turn.tool_calls]]\nname = \"submit_output\"\nraw_arguments = " + tomlString(`{"content": "`+t.text) + "\n"
	case t.submit:
		return "[[turn]]\n[[turn.tool_calls]]\nname = \"submit_output\"\narguments = { content = " + tomlString(t.text) + " }\n"
	case t.cut:
		return "[[turn]]\nstop_reason = \"max_tokens\"\ntext = " + tomlString(t.text) + "\n"
	}
	return "[[turn]]\ntext = " + tomlString(t.text) + "\n"
}

// label is the format's label, as a fence or a preamble names it.
func (f yieldFormat) label() string { name, _, _ := strings.Cut(f.name, "-"); return name }

func fenced(f yieldFormat) string { return "```" + f.label() + "\n" + f.valid + "\n```" }
func preamble(f yieldFormat) string {
	return "Here is the " + strings.ToUpper(f.label()) + ":\n\n" + f.valid
}

var yieldModels = []yieldModel{
	{name: "tool, clean", valid: true, turns: func(f yieldFormat) []yturn { return []yturn{submit(f.valid)} }},
	{name: "tool, fenced", valid: true, turns: func(f yieldFormat) []yturn { return []yturn{submit(fenced(f)), submit(f.valid)} }},
	{name: "tool, preamble", valid: true, turns: func(f yieldFormat) []yturn { return []yturn{submit(preamble(f)), submit(f.valid)} }},
	{name: "tool, wrong format", valid: true, turns: func(f yieldFormat) []yturn { return []yturn{submit(f.wrong), submit(f.valid)} }},
	{name: "tool, missing field", valid: true, turns: func(f yieldFormat) []yturn {
		if f.missing == "" {
			return nil
		}
		return []yturn{submit(f.missing), submit(f.valid)}
	}},
	{name: "tool, identical resubmit", valid: true, turns: func(f yieldFormat) []yturn {
		return []yturn{submit(fenced(f)), submit(fenced(f)), submit(f.valid)}
	}},
	{name: "tool, truncated call", valid: true, turns: func(f yieldFormat) []yturn {
		return []yturn{{submit: true, cut: true, text: f.valid[:len(f.valid)/2]}, submit(f.valid)}
	}},
	{name: "tool, three mistakes", valid: true, turns: func(f yieldFormat) []yturn {
		return []yturn{submit(fenced(f)), submit(preamble(f)), submit(f.wrong), submit(f.valid)}
	}},
	{name: "tool, chatter first", valid: true, turns: func(f yieldFormat) []yturn {
		return []yturn{reply("Let me think about the module first."), submit(f.valid)}
	}},
	{name: "text-only, clean", toolless: true, valid: true, turns: func(f yieldFormat) []yturn { return []yturn{reply(f.valid)} }},
	{name: "text-only, preamble", toolless: true, valid: true, turns: func(f yieldFormat) []yturn { return []yturn{reply(preamble(f)), reply(f.valid)} }},
	{name: "text-only, fenced", toolless: true, valid: true, turns: func(f yieldFormat) []yturn { return []yturn{reply(fenced(f)), reply(f.valid)} }},
	{name: "text-only, wrong format", toolless: true, valid: true, turns: func(f yieldFormat) []yturn { return []yturn{reply(f.wrong), reply(f.valid)} }},
	{name: "text-only, truncated", toolless: true, valid: true, turns: func(f yieldFormat) []yturn {
		return []yturn{{cut: true, text: f.valid[:len(f.valid)/2]}, reply(f.valid)}
	}},
	{name: "text-only, three mistakes", toolless: true, valid: true, turns: func(f yieldFormat) []yturn {
		return []yturn{reply(fenced(f)), reply(preamble(f)), reply(f.wrong), reply(f.valid)}
	}},
	{name: "stubborn (never valid)", turns: func(f yieldFormat) []yturn {
		return slices.Repeat([]yturn{submit(f.wrong)}, 12)
	}},
}

// yieldResult is one scripted turn's outcome.
type yieldResult struct {
	answered       bool
	repairs, calls int
	// asIs: the answer recorded is not the valid one but a mistake the
	// format's checks cannot tell from an answer (prose before markdown,
	// a sentence that is a one-field CSV row).
	asIs bool
}

// playYield runs one turn of m against f.
func playYield(tb testing.TB, m yieldModel, f yieldFormat, turns []yturn) yieldResult {
	tb.Helper()
	var lines []string
	for _, t := range turns {
		lines = append(lines, t.toml())
	}
	script := strings.Join(lines, "\n")
	if m.toolless {
		script = "tools = false\n" + script
	}
	turn := newTurn(tb, answerStage+"[stages.answer.output]\n"+f.keys+"\n", script)
	res := runTurn(context.Background(), turn, &events{})
	if res.Err != nil {
		tb.Fatalf("%s / %s: %v", m.name, f.name, res.Err)
	}
	st := stageStatus(tb, turn, "001-answer@1")
	out := yieldResult{answered: res.Status == engine.StatusAnswered, repairs: st.Repairs, calls: st.Iterations}
	out.asIs = res.Answer != nil && res.Answer.Content != f.valid
	if out.asIs && laxFormats[f.name] == "" {
		tb.Errorf("%s / %s: answered %q, not the valid answer", m.name, f.name, res.Answer.Content)
	}
	return out
}

// The target: a model that eventually says something valid is answered,
// within 3 repairs.
func TestYield(t *testing.T) {
	for _, m := range yieldModels {
		for _, f := range yieldFormats {
			turns := m.turns(f)
			if turns == nil {
				continue
			}
			r := playYield(t, m, f, turns)
			switch {
			case m.valid && (!r.answered || r.repairs > 3):
				t.Errorf("%s / %s: answered %v after %d repairs, %d calls; want answered within 3 repairs", m.name, f.name, r.answered, r.repairs, r.calls)
			case !m.valid && r.answered:
				t.Errorf("%s / %s: a model that never says something valid was answered", m.name, f.name)
			case !m.valid && r.calls > 3:
				t.Errorf("%s / %s: a model repeating itself made %d calls; the repair budget should stop it at 3", m.name, f.name, r.calls)
			}
		}
	}
}

var yieldTable sync.Once

func BenchmarkYield(b *testing.B) {
	var turns, answered, repairs, calls, asIs int
	cells := map[string]map[string]yieldResult{}
	for b.Loop() {
		turns, answered, repairs, calls, asIs = 0, 0, 0, 0, 0
		for _, m := range yieldModels {
			cells[m.name] = map[string]yieldResult{}
			for _, f := range yieldFormats {
				script := m.turns(f)
				if script == nil {
					continue
				}
				r := playYield(b, m, f, script)
				cells[m.name][f.name] = r
				turns++
				calls += r.calls
				if r.answered {
					answered++
					repairs += r.repairs
				}
				if r.asIs {
					asIs++
				}
			}
		}
	}
	b.ReportMetric(float64(answered)/float64(turns), "answers/turn")
	b.ReportMetric(float64(repairs)/float64(answered), "repairs/answer")
	b.ReportMetric(float64(calls)/float64(answered), "calls/answer")
	yieldTable.Do(func() {
		var t strings.Builder
		fmt.Fprintf(&t, "\n%-28s", "model \\ format")
		for _, f := range yieldFormats {
			fmt.Fprintf(&t, " %-10s", f.name)
		}
		t.WriteString("\n")
		for _, m := range yieldModels {
			fmt.Fprintf(&t, "%-28s", m.name)
			for _, f := range yieldFormats {
				r, ok := cells[m.name][f.name]
				switch {
				case !ok:
					fmt.Fprintf(&t, " %-10s", "n/a")
				case r.asIs:
					fmt.Fprintf(&t, " %-10s", fmt.Sprintf("as-is %dc", r.calls))
				case r.answered:
					fmt.Fprintf(&t, " %-10s", fmt.Sprintf("ok %dr %dc", r.repairs, r.calls))
				default:
					fmt.Fprintf(&t, " %-10s", fmt.Sprintf("-- %dr %dc", r.repairs, r.calls))
				}
			}
			t.WriteString("\n")
		}
		fmt.Fprintf(&t, "turns %d, answered %d (%d as-is): %.2f answers/turn, %.2f repairs/answer, %.2f calls/answer\n", turns, answered, asIs,
			float64(answered)/float64(turns), float64(repairs)/float64(answered), float64(calls)/float64(answered))
		t.WriteString("ok: answered with the valid answer; as-is: a mistake the format's checks take for an answer; --: no answer; r: repairs, c: model calls")
		for _, f := range yieldFormats {
			if why := laxFormats[f.name]; why != "" {
				fmt.Fprintf(&t, "\n%s: %s", f.name, why)
			}
		}
		// On stdout, whole: a benchmark's log is cut to ten lines.
		fmt.Println(t.String())
	})
}

// The answer's shape at the source, measured (DESIGN §17): the same
// scripted models, played by a fake provider that takes every mechanism
// (llm.Shaper, as OpenAI's APIs do) and honours each exactly as its API
// documents it, against structured = "prompted" (today's behaviour) and
// "auto":
//
//	go test ./engine -run '^$' -bench Yield_constrained
//
// TestYield_constrained holds what auto must buy.

// realSchema is a real schema (testdata/jsonschemabench): draft-04, an id,
// two optional properties, so strict only as its projection (DESIGN §17).
const realSchema = "../testdata/jsonschemabench/Github_easy/o44363.json"

// constrainedFormats are the formats of the comparison: yieldFormats, with
// json's schema as it is (open: not strict) and closed (strict), a real
// schema that is strict as its projection, and json without a schema.
var constrainedFormats = append([]yieldFormat{
	{name: "json-real", keys: `format = "json"` + "\n" + `schema_file = '` + realSchema + `'`, fromSchema: true,
		valid: `{"name": "a", "unit": "a"}`, wrong: "name: a\nunit: a", missing: `{"name": "a"}`},
	{name: "json-strict", keys: `format = "json"` + "\n" + `schema = { type = "object", additionalProperties = false, required = ["safe", "issues"], properties = { safe = { type = "boolean" }, issues = { type = "array", items = { type = "string" } } } }`,
		valid: `{"safe": true, "issues": []}`, wrong: "safe: true\nissues: []", missing: `{"safe": true}`},
	{name: "json-any", keys: `format = "json"`, valid: `{"safe": true, "issues": []}`, wrong: "safe: true\nissues: []"},
}, yieldFormats...)

// A constrained is a fake provider that takes strict tools and schemas, a
// named tool choice and JSON replies, and plays a yieldModel's turns as
// the mechanisms a request asks for let it:
//
//   - a named tool choice: the model calls that tool, with what it meant
//     to say (a reply becomes the submission of its text);
//   - a strict submit_output whose content is the answer's schema: the
//     decoder writes only a value the schema takes — the valid answer;
//   - a typed content, not strict: the model writes the value as JSON
//     where what it meant is JSON, and stringifies it otherwise;
//   - a strict JSON reply with a schema: the valid answer; JSON mode (no
//     schema, or not strict): JSON guaranteed, not its schema — what the
//     model meant where that is JSON, the valid answer's JSON otherwise;
//   - nothing asked: the turn as scripted, mistakes and all.
//
// A turn cut at the token limit stays cut: no mechanism prevents that.
type constrained struct {
	f        yieldFormat
	turns    []yturn
	toolless bool
	n        int
}

func (c *constrained) Name() string { return "fake:constrained" }

func (c *constrained) Shapes(*llm.Request) llm.Shapes {
	return llm.Shapes{Strict: llm.StrictOpenAI, ToolChoice: true, Reply: true, ReplyAny: true}
}

func (c *constrained) Stream(_ context.Context, req *llm.Request, onDelta func(llm.Delta) error) (*llm.Response, error) {
	if c.toolless && len(req.Tools) > 0 {
		return nil, fmt.Errorf("fake:constrained: HTTP 400: this model does not support tools: %w", llm.ErrToolsUnsupported)
	}
	t := c.turns[min(c.n, len(c.turns)-1)]
	c.n++
	var submitTool *llm.ToolSpec
	for i := range req.Tools {
		if req.Tools[i].Name == "submit_output" {
			submitTool = &req.Tools[i]
		}
	}
	if req.ToolChoice == "submit_output" && submitTool != nil {
		t.submit = true
	}
	resp := &llm.Response{StopReason: llm.StopEndTurn}
	if t.cut {
		resp.StopReason = llm.StopMaxTokens
	}
	switch {
	case t.submit && submitTool != nil && t.cut:
		resp.ToolCalls = []llm.ToolCall{{ID: "call", Name: "submit_output", Arguments: json.RawMessage(`{"content": "` + t.text)}}
	case t.submit && submitTool != nil:
		content, _ := json.Marshal(t.text) // a string, as the prompted schema asks
		if typedContent(submitTool.Schema) {
			switch {
			case submitTool.Strict && c.f.fromSchema:
				content = withinContent(submitTool.Schema)
			case submitTool.Strict:
				content = []byte(c.f.valid)
			case json.Valid([]byte(t.text)):
				content = []byte(t.text)
			}
		}
		resp.ToolCalls = []llm.ToolCall{{ID: "call", Name: "submit_output", Arguments: json.RawMessage(`{"content":` + string(content) + `}`)}}
		resp.StopReason = llm.StopToolUse
	default:
		text := t.text
		if f := req.Reply; f != nil && !t.cut {
			switch {
			case f.Strict && f.Schema != nil && c.f.fromSchema:
				text = string(projectiontest.Minimal(f.Schema))
			case f.Strict && f.Schema != nil:
				text = c.f.valid
			case !json.Valid([]byte(text)):
				text = c.f.valid
			}
		}
		resp.Text = text
		if err := onDelta(llm.Delta{Text: text}); err != nil {
			return nil, err
		}
	}
	return resp, nil
}

// withinContent is the least value submit_output's content schema takes,
// as a strict decoder bound to it writes it.
func withinContent(schema json.RawMessage) []byte {
	var root map[string]any
	json.Unmarshal(schema, &root)
	props, _ := root["properties"].(map[string]any)
	content, _ := props["content"].(map[string]any)
	if list, ok := content["anyOf"].([]any); ok && len(list) == 2 {
		content, _ = list[0].(map[string]any) // the strict form beside unavailable: the content, or null
	}
	b, _ := json.Marshal(projectiontest.MinimalAt(content, root))
	return b
}

// typedContent reports whether a submit_output schema's content is other
// than a string.
func typedContent(schema json.RawMessage) bool {
	type typed struct {
		Type  any     `json:"type"`
		AnyOf []typed `json:"anyOf"`
	}
	var s struct {
		Properties struct {
			Content typed `json:"content"`
		} `json:"properties"`
	}
	json.Unmarshal(schema, &s)
	c := s.Properties.Content
	if len(c.AnyOf) > 0 {
		c = c.AnyOf[0] // the strict form beside unavailable: the content, or null
	}
	return c.Type != "string"
}

// playConstrained runs one turn of m against f on the constrained fake,
// with structured = mode.
func playConstrained(tb testing.TB, m yieldModel, f yieldFormat, mode string) yieldResult {
	tb.Helper()
	turn := newTurn(tb, answerStage+"[stages.answer.output]\n"+f.keys+"\nstructured = \""+mode+"\"\n", "")
	turn.Models = oneModel{&constrained{f: f, turns: m.turns(f), toolless: m.toolless}}
	res := runTurn(context.Background(), turn, &events{})
	if res.Err != nil {
		tb.Fatalf("%s / %s / %s: %v", m.name, f.name, mode, res.Err)
	}
	st := stageStatus(tb, turn, "001-answer@1")
	out := yieldResult{answered: res.Status == engine.StatusAnswered, repairs: st.Repairs, calls: st.Iterations}
	out.asIs = res.Answer != nil && !sameAnswer(res.Answer.Content, f.valid)
	return out
}

// sameAnswer reports whether an answer is the valid one: byte for byte,
// or the same JSON compacted (a typed content's bytes are).
func sameAnswer(got, valid string) bool {
	if got == valid {
		return true
	}
	var a, b any
	return json.Unmarshal([]byte(got), &a) == nil && json.Unmarshal([]byte(valid), &b) == nil && fmt.Sprint(a) == fmt.Sprint(b)
}

// yieldTotals are a set of turns' figures.
type yieldTotals struct{ turns, answered, repairs, calls, asIs int }

func (y *yieldTotals) add(r yieldResult) {
	y.turns++
	y.calls += r.calls
	if r.answered {
		y.answered++
		y.repairs += r.repairs
	}
	if r.asIs {
		y.asIs++
	}
}

func (y yieldTotals) answersPerTurn() float64 { return float64(y.answered) / float64(y.turns) }
func (y yieldTotals) repairsPerAnswer() float64 {
	return float64(y.repairs) / float64(max(y.answered, 1))
}
func (y yieldTotals) callsPerAnswer() float64 { return float64(y.calls) / float64(max(y.answered, 1)) }

// constrainedRun plays every model against every format in one mode.
func constrainedRun(tb testing.TB, mode string) (byFormat map[string]yieldTotals, cells map[[2]string]yieldResult) {
	byFormat, cells = map[string]yieldTotals{}, map[[2]string]yieldResult{}
	for _, f := range constrainedFormats {
		var tot yieldTotals
		for _, m := range yieldModels {
			if m.turns(f) == nil {
				continue
			}
			r := playConstrained(tb, m, f, mode)
			cells[[2]string{m.name, f.name}] = r
			tot.add(r)
		}
		byFormat[f.name] = tot
	}
	return byFormat, cells
}

// What auto must buy: a JSON answer whose schema fits the strict subset,
// as written or as its projection (a real schema), is answered, in one
// call but where the model's reply was cut at the token limit, whatever
// mistakes the model would make (even the one that never says anything
// valid); and nowhere does auto answer less, or in more calls, than
// prompted.
func TestYield_constrained(t *testing.T) {
	_, prompted := constrainedRun(t, "prompted")
	_, auto := constrainedRun(t, "auto")
	for key, a := range auto {
		p := prompted[key]
		m, f := key[0], key[1]
		if f == "json-strict" || f == "json-real" {
			cut := strings.Contains(m, "truncated")
			if !a.answered || a.asIs || (!cut && a.calls != 1) || (cut && a.calls != 2) {
				t.Errorf("%s / %s under auto: answered %v (as-is %v) in %d calls", m, f, a.answered, a.asIs, a.calls)
			}
		}
		if p.answered && !a.answered || a.answered && p.answered && a.calls > p.calls {
			t.Errorf("%s / %s: auto answered %v in %d calls, prompted %v in %d", m, f, a.answered, a.calls, p.answered, p.calls)
		}
	}
}

var constrainedTable sync.Once

func BenchmarkYield_constrained(b *testing.B) {
	for _, mode := range []string{"prompted", "auto"} {
		for _, f := range constrainedFormats {
			b.Run(mode+"/"+f.name, func(b *testing.B) {
				var tot yieldTotals
				for b.Loop() {
					tot = yieldTotals{}
					for _, m := range yieldModels {
						if m.turns(f) != nil {
							tot.add(playConstrained(b, m, f, mode))
						}
					}
				}
				b.ReportMetric(tot.answersPerTurn(), "answers/turn")
				b.ReportMetric(tot.repairsPerAnswer(), "repairs/answer")
				b.ReportMetric(tot.callsPerAnswer(), "calls/answer")
			})
		}
	}
	constrainedTable.Do(func() {
		prompted, _ := constrainedRun(b, "prompted")
		auto, _ := constrainedRun(b, "auto")
		var t strings.Builder
		fmt.Fprintf(&t, "\n%-12s %-34s %-34s\n", "format", "prompted: answers/turn repairs calls", "auto: answers/turn repairs calls")
		var pAll, aAll yieldTotals
		for _, f := range constrainedFormats {
			p, a := prompted[f.name], auto[f.name]
			fmt.Fprintf(&t, "%-12s %-34s %-34s\n", f.name,
				fmt.Sprintf("%.2f  %.2f  %.2f", p.answersPerTurn(), p.repairsPerAnswer(), p.callsPerAnswer()),
				fmt.Sprintf("%.2f  %.2f  %.2f", a.answersPerTurn(), a.repairsPerAnswer(), a.callsPerAnswer()))
			for _, x := range []struct {
				from yieldTotals
				to   *yieldTotals
			}{{p, &pAll}, {a, &aAll}} {
				x.to.turns += x.from.turns
				x.to.answered += x.from.answered
				x.to.repairs += x.from.repairs
				x.to.calls += x.from.calls
			}
		}
		fmt.Fprintf(&t, "%-12s %-34s %-34s\n", "all",
			fmt.Sprintf("%.2f  %.2f  %.2f", pAll.answersPerTurn(), pAll.repairsPerAnswer(), pAll.callsPerAnswer()),
			fmt.Sprintf("%.2f  %.2f  %.2f", aAll.answersPerTurn(), aAll.repairsPerAnswer(), aAll.callsPerAnswer()))
		t.WriteString("repairs: refused submissions per answer; calls: model calls per answer (turns without an answer count their calls)")
		fmt.Println(t.String())
	})
}

// realSchemaFormats are real schemas (testdata/jsonschemabench) sent strict
// to OpenAI as their projection, and whose least value (every optional
// property left out) the schema as written takes: what a model answering
// within whatever schema it is sent, and reading what the description
// says of the keywords left out, gives. At most n of them.
func realSchemaFormats(tb testing.TB, n int) []yieldFormat {
	tb.Helper()
	files, _ := filepath.Glob("../testdata/jsonschemabench/*/*.json")
	var out []yieldFormat
	for _, file := range files {
		if len(out) == n {
			break
		}
		abs, _ := filepath.Abs(file)
		c, err := outputspec.Compile(outputspec.Spec{Format: "json", SchemaFile: abs})
		if err != nil || c.SchemaUnchecked() != "" || c.ToolStrict(outputspec.StrictOpenAI, outputspec.ToolShape{Typed: true}) != "" {
			continue
		}
		if sent, _ := c.Projection(outputspec.StrictOpenAI, false); sent == nil {
			continue
		}
		tool := c.ToolSchemaShaped(outputspec.Ways{Tool: true, Unavailable: true}, outputspec.ToolShape{Typed: true, Strict: outputspec.StrictOpenAI})
		v := outputspec.NewDesk(c).Submit(context.Background(), outputspec.Submission{Args: json.RawMessage(`{"content":` + string(withinContent(tool)) + `}`), Typed: true, Projected: outputspec.StrictOpenAI})
		if !v.Accepted {
			continue
		}
		out = append(out, yieldFormat{name: filepath.Base(filepath.Dir(file)) + "/" + filepath.Base(file),
			keys: `format = "json"` + "\n" + `schema_file = '` + abs + `'`, fromSchema: true, valid: v.Content, wrong: "not json"})
	}
	return out
}

// A model that answers within whatever schema it is sent answers a real
// schema's projection in one call: calls per answer 1.00 (issue 31).
func TestYield_realSchemas(t *testing.T) {
	formats := realSchemaFormats(t, 60)
	if len(formats) < 60 {
		t.Fatalf("%d real schemas; want 60", len(formats))
	}
	var tot yieldTotals
	within := yieldModel{name: "within the schema sent", valid: true, turns: func(f yieldFormat) []yturn { return []yturn{submit(f.wrong)} }}
	for _, f := range formats {
		r := playConstrained(t, within, f, "auto")
		tot.add(r)
		if !r.answered || r.calls != 1 || r.asIs {
			t.Errorf("%s: answered %v in %d calls (as-is %v)", f.name, r.answered, r.calls, r.asIs)
		}
	}
	if got := tot.callsPerAnswer(); got != 1 {
		t.Errorf("%.2f calls per answer; want 1.00", got)
	}
}

func BenchmarkYield_realSchemas(b *testing.B) {
	formats := realSchemaFormats(b, 60)
	within := yieldModel{name: "within the schema sent", valid: true, turns: func(f yieldFormat) []yturn { return []yturn{submit(f.wrong)} }}
	var tot yieldTotals
	for b.Loop() {
		tot = yieldTotals{}
		for _, f := range formats {
			tot.add(playConstrained(b, within, f, "auto"))
		}
	}
	b.ReportMetric(tot.answersPerTurn(), "answers/turn")
	b.ReportMetric(tot.callsPerAnswer(), "calls/answer")
}
