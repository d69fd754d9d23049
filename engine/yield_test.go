package engine_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/coda-acp/coda/engine"
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
// whether it eventually says something valid. Turns are TOML [[turn]]
// tables; toolless models are played by a server that refuses tools.
type yieldModel struct {
	name     string
	toolless bool
	turns    func(f yieldFormat) []string // nil: not applicable to f
	valid    bool                         // eventually says something valid
}

func submit(content string) string {
	return "[[turn]]\n[[turn.tool_calls]]\nname = \"submit_output\"\narguments = { content = " + tomlString(content) + " }\n"
}

func reply(text string) string { return "[[turn]]\ntext = " + tomlString(text) + "\n" }

func fenced(f yieldFormat) string { return "```" + f.name + "\n" + f.valid + "\n```" }
func preamble(f yieldFormat) string {
	return "Here is the " + strings.ToUpper(f.name) + ":\n\n" + f.valid
}

var yieldModels = []yieldModel{
	{name: "tool, clean", valid: true, turns: func(f yieldFormat) []string { return []string{submit(f.valid)} }},
	{name: "tool, fenced", valid: true, turns: func(f yieldFormat) []string { return []string{submit(fenced(f)), submit(f.valid)} }},
	{name: "tool, preamble", valid: true, turns: func(f yieldFormat) []string { return []string{submit(preamble(f)), submit(f.valid)} }},
	{name: "tool, wrong format", valid: true, turns: func(f yieldFormat) []string { return []string{submit(f.wrong), submit(f.valid)} }},
	{name: "tool, missing field", valid: true, turns: func(f yieldFormat) []string {
		if f.missing == "" {
			return nil
		}
		return []string{submit(f.missing), submit(f.valid)}
	}},
	{name: "tool, identical resubmit", valid: true, turns: func(f yieldFormat) []string {
		return []string{submit(fenced(f)), submit(fenced(f)), submit(f.valid)}
	}},
	{name: "tool, truncated call", valid: true, turns: func(f yieldFormat) []string {
		cut := "[[turn]]\nstop_reason = \"max_tokens\"\n[[turn.tool_calls]]\nname = \"submit_output\"\nraw_arguments = " + tomlString(`{"content": "`+f.valid[:len(f.valid)/2]) + "\n"
		return []string{cut, submit(f.valid)}
	}},
	{name: "tool, three mistakes", valid: true, turns: func(f yieldFormat) []string {
		return []string{submit(fenced(f)), submit(preamble(f)), submit(f.wrong), submit(f.valid)}
	}},
	{name: "tool, chatter first", valid: true, turns: func(f yieldFormat) []string {
		return []string{reply("Let me think about the module first."), submit(f.valid)}
	}},
	{name: "text-only, clean", toolless: true, valid: true, turns: func(f yieldFormat) []string { return []string{reply(f.valid)} }},
	{name: "text-only, preamble", toolless: true, valid: true, turns: func(f yieldFormat) []string { return []string{reply(preamble(f)), reply(f.valid)} }},
	{name: "text-only, fenced", toolless: true, valid: true, turns: func(f yieldFormat) []string { return []string{reply(fenced(f)), reply(f.valid)} }},
	{name: "text-only, wrong format", toolless: true, valid: true, turns: func(f yieldFormat) []string { return []string{reply(f.wrong), reply(f.valid)} }},
	{name: "text-only, truncated", toolless: true, valid: true, turns: func(f yieldFormat) []string {
		return []string{"[[turn]]\nstop_reason = \"max_tokens\"\ntext = " + tomlString(f.valid[:len(f.valid)/2]) + "\n", reply(f.valid)}
	}},
	{name: "text-only, three mistakes", toolless: true, valid: true, turns: func(f yieldFormat) []string {
		return []string{reply(fenced(f)), reply(preamble(f)), reply(f.wrong), reply(f.valid)}
	}},
	{name: "stubborn (never valid)", turns: func(f yieldFormat) []string {
		return slices.Repeat([]string{submit(f.wrong)}, 12)
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
func playYield(tb testing.TB, m yieldModel, f yieldFormat, turns []string) yieldResult {
	tb.Helper()
	script := strings.Join(turns, "\n")
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
