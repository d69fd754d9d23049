package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/blueprint"
	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/provider/script"
)

// bigScript is a script model of one call to name with arguments of at
// least size bytes, then a submission.
func bigScript(t *testing.T, name string, size int) *script.Model {
	t.Helper()
	sc := &script.Script{Turns: []script.Turn{
		{ToolCalls: []script.ToolCall{{Name: name, RawArguments: `{"content": "` + strings.Repeat("x", size) + `"}`}}},
		{Expect: "too large", ToolCalls: []script.ToolCall{{Name: blueprint.ToolSubmitOutput, Arguments: map[string]any{"content": "Short."}}}},
	}}
	return script.New("script:big", sc)
}

// A submit_output whose arguments pass their cap is refused unparsed,
// saying the answer is too large; the editor is shown a small description
// of the call, once, and the record keeps no more.
func TestRun_oversizedSubmission(t *testing.T) {
	turn := newTurn(t, defaultAgent, "")
	turn.Models = oneModel{bigScript(t, blueprint.ToolSubmitOutput, 2<<20)}
	sink := &events{}
	res := runTurn(context.Background(), turn, sink)
	ended(t, res, engine.StatusAnswered, "end_turn")
	calls, last := toolCalls(sink.evs)
	if len(calls) != 2 {
		t.Fatalf("%d tool calls shown, want 2", len(calls))
	}
	size := len(`{"content": ""}`) + 2<<20
	got := resultText(last[calls[0].ID])
	want := "The answer is too large: this submit_output call's arguments are " + strconv.Itoa(size) + " bytes, over the " + strconv.Itoa(llm.MaxSubmitArgs) + "-byte cap"
	if last[calls[0].ID].Status != engine.ToolFailed || !strings.Contains(got, want) || !strings.Contains(got, "Submit a shorter answer.") {
		t.Errorf("result %s %q; want failed, %q", last[calls[0].ID].Status, got, want)
	}
	var shown struct {
		Oversized struct {
			Bytes int    `json:"bytes"`
			Cap   int    `json:"cap"`
			Head  string `json:"head"`
		} `json:"oversized"`
	}
	raw := calls[0].RawInput
	if err := json.Unmarshal(raw, &shown); err != nil || len(raw) > 2<<10 || shown.Oversized.Bytes != size || shown.Oversized.Cap != llm.MaxSubmitArgs || !strings.HasPrefix(shown.Oversized.Head, `{"content": "xxx`) {
		t.Errorf("rawInput (%d bytes) = %.200s (%v)", len(raw), raw, err)
	}
	resp, err := os.ReadFile(recordPath(turn, "stages/001-answer@1/response.md"))
	if err != nil || len(resp) > 8<<10 || !bytes.Contains(resp, []byte(`"oversized"`)) {
		t.Errorf("response.md is %d bytes (%v); want a bounded copy", len(resp), err)
	}
}

// Any other tool's arguments past 1 MiB are refused unrun, with the size
// and the cap.
func TestRun_oversizedToolArgs(t *testing.T) {
	turn := newTurn(t, `
[agent]
name = "w"
[stages.answer]
mode = "output"
available_tools = ["count"]
`, "")
	turn.Models = oneModel{bigScript(t, "count", 3<<20)}
	c := &counter{}
	turn.Engine.Tools = map[string]engine.Tool{"count": c}
	sink := &events{}
	res := runTurn(context.Background(), turn, sink)
	ended(t, res, engine.StatusAnswered, "end_turn")
	if c.n != 0 {
		t.Errorf("the tool ran %d times", c.n)
	}
	calls, last := toolCalls(sink.evs)
	want := "The arguments of this count call are too large: " + strconv.Itoa(len(`{"content": ""}`)+3<<20) + " bytes, over the 1048576-byte cap. The call was not run."
	if got := resultText(last[calls[0].ID]); !strings.Contains(got, want) {
		t.Errorf("result %q; want %q", got, want)
	}
	if calls[0].Status != engine.ToolInProgress || calls[0].Title != "count" || len(calls[0].RawInput) > 2<<10 {
		t.Errorf("tool_call = %s %q, rawInput %d bytes", calls[0].Status, calls[0].Title, len(calls[0].RawInput))
	}
}

// counter is an edit tool that counts its runs.
type counter struct{ n int }

func (*counter) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: "count", Schema: json.RawMessage(`{"type":"object"}`)}
}
func (*counter) Kind() string { return "edit" }
func (c *counter) Title(json.RawMessage) (string, []engine.Location) {
	return "counting", nil
}
func (c *counter) Run(context.Context, *engine.Call) engine.ToolResult {
	c.n++
	return engine.ToolResult{Output: "counted"}
}

// whole is a Model that hands back huge arguments without cutting them,
// as a Model outside coda's providers might.
type whole struct{ calls int }

func (*whole) Name() string { return "whole" }
func (w *whole) Stream(context.Context, *llm.Request, func(llm.Delta) error) (*llm.Response, error) {
	w.calls++
	if w.calls == 1 {
		args := `{"content":"` + strings.Repeat("y", 2<<20) + `"}`
		return &llm.Response{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "submit_output", Arguments: json.RawMessage(args)}}}, nil
	}
	return &llm.Response{ToolCalls: []llm.ToolCall{{ID: "c2", Name: "submit_output", Arguments: json.RawMessage(`{"content":"ok"}`)}}}, nil
}

// The engine holds every Model's calls to the cap, not only its own
// providers'.
func TestRun_capsAnyModel(t *testing.T) {
	turn := newTurn(t, defaultAgent, "")
	turn.Models = oneModel{&whole{}}
	sink := &events{}
	res := runTurn(context.Background(), turn, sink)
	ended(t, res, engine.StatusAnswered, "end_turn")
	calls, last := toolCalls(sink.evs)
	if !strings.Contains(resultText(last[calls[0].ID]), "The answer is too large") || len(calls[0].RawInput) > 2<<10 {
		t.Errorf("first call: %q, rawInput %d bytes", resultText(last[calls[0].ID]), len(calls[0].RawInput))
	}
}

// The editor and the record get model-supplied JSON compactly, so one
// message is one line; arguments that are not JSON go as a JSON string.
func TestRun_rawInputCompact(t *testing.T) {
	turn := newTurn(t, defaultAgent, `
[[turn]]
[[turn.tool_calls]]
name = "submit_output"
raw_arguments = '''
{
  "content": "a\nb",
  "artifacts": [ ]
}
'''
[[turn.tool_calls]]
name = "submit_output"
raw_arguments = '{"content": "x'
`)
	sink := &events{}
	res := runTurn(context.Background(), turn, sink)
	ended(t, res, engine.StatusAnswered, "end_turn")
	calls, _ := toolCalls(sink.evs)
	if got := string(calls[0].RawInput); got != `{"content":"a\nb","artifacts":[]}` {
		t.Errorf("rawInput = %s", got)
	}
	if got := string(calls[1].RawInput); got != `"{\"content\": \"x"` {
		t.Errorf("rawInput of broken JSON = %s", got)
	}
	resp, _ := os.ReadFile(recordPath(turn, "stages/001-answer@1/response.md"))
	if !bytes.Contains(resp, []byte(`Tool call submit_output: {"content":"a\nb","artifacts":[]}`)) {
		t.Errorf("response.md:\n%s", resp)
	}
}

// A state directory that cannot be written (here a file) does not stop the
// turn: it answers, and says once that the record is missing.
func TestRun_unwritableStateDir(t *testing.T) {
	turn := newTurn(t, twoStages, `
[[turn]]
[[turn.tool_calls]]
name = "transition"
arguments = { to = "report" }
[[turn]]
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "Fine." }
`)
	if err := os.WriteFile(turn.Store.Dir(), []byte("not a directory"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := runTurn(context.Background(), turn, &events{})
	ended(t, res, engine.StatusAnswered, "end_turn")
	n := 0
	for _, w := range res.Warnings {
		if strings.Contains(w, "the run record could not be written") {
			n++
			if !strings.Contains(w, "`coda result run-1` will not find this run") || !strings.Contains(w, "not a directory") {
				t.Errorf("warning %q", w)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d record warnings in %q; want one", n, res.Warnings)
	}
	if !slicesContain(res.Answer.Warnings, "the run record could not be written") {
		t.Errorf("the answer record's warnings %q lack it", res.Answer.Warnings)
	}
	if _, err := turn.Store.ReadRun(turn.RunID); err == nil {
		t.Error("ReadRun found a run that was never written")
	}
}

// A state directory that fails only at the end (run.json after the answer)
// still gets its warning into the result.
func TestRun_stateDirFailsAtTheEnd(t *testing.T) {
	turn := newTurn(t, defaultAgent, `
[[turn]]
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "Fine." }
`)
	runJSON := recordPath(turn, "run.json")
	sink := &events{on: func(ev engine.Event) {
		if ev.Kind == engine.EventFinalAnswer {
			// Replace run.json with a directory the rename cannot replace.
			os.Remove(runJSON)
			os.MkdirAll(filepath.Join(runJSON, "x"), 0o755)
		}
	}}
	res := runTurn(context.Background(), turn, sink)
	ended(t, res, engine.StatusAnswered, "end_turn")
	if !slicesContain(res.Warnings, "the run record could not be written") || !slicesContain(res.Answer.Warnings, "the run record could not be written") {
		t.Errorf("warnings %q, answer's %q", res.Warnings, res.Answer.Warnings)
	}
}

func slicesContain(ss []string, sub string) bool {
	for _, s := range ss {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
