package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/blueprint"
	"github.com/coda-acp/coda/engine/llm"
)

// Answers from every model (DESIGN §15): a reply checked as the answer,
// the repair budget, unavailable, models without tools, what later stages
// can read, and the closing no-answer event (§8).

const jsonStage = answerStage + "[stages.answer.output]\nformat = \"json\"\n"

// jsonStageWith is jsonStage with more keys for the stage.
func jsonStageWith(keys string) string {
	return answerStage + keys + "[stages.answer.output]\nformat = \"json\"\n"
}

// noAnswerEvent is the run's EventNoAnswer; it fails the test unless there
// is exactly one, and it is the last event.
func noAnswerEvent(t *testing.T, sink *events) engine.Event {
	t.Helper()
	var found []engine.Event
	for _, ev := range sink.evs {
		if ev.Kind == engine.EventNoAnswer || ev.Kind == engine.EventFinalAnswer {
			found = append(found, ev)
		}
	}
	if len(found) != 1 || found[0].Kind != engine.EventNoAnswer || sink.evs[len(sink.evs)-1].Kind != engine.EventNoAnswer {
		t.Fatalf("want one closing EventNoAnswer, last; got %d closing events", len(found))
	}
	return found[0]
}

// A model that only writes text answers by reply: markdown at once.
func TestRun_replyIsTheAnswer(t *testing.T) {
	turn, sp := scripted(t, answerStage, `
[[turn]]
text = "  # Verdict\n\nIt is safe.\n"
`)
	sink := &events{}
	res := runTurn(context.Background(), turn, sink)
	ended(t, res, engine.StatusAnswered, "end_turn")
	flagsAre(t, res, engine.FlagAnswerFromReply)
	if res.Answer.Content != "# Verdict\n\nIt is safe." {
		t.Errorf("answer %q, want the reply trimmed", res.Answer.Content)
	}
	if diff := cmp.Diff([]string{engine.FlagAnswerFromReply}, res.Answer.Flags); diff != "" {
		t.Errorf("answer flags (-want +got):\n%s", diff)
	}
	if !strings.Contains(sp.reqs[0].System, "call submit_output with it, or reply with the answer alone") {
		t.Errorf("the stage prompt does not say a reply can be the answer:\n%s", sp.reqs[0].System)
	}
	if st := stageStatus(t, turn, "001-answer@1"); !st.Answered || st.Revisits != 0 || st.Repairs != 0 {
		t.Errorf("status.json = %+v", st)
	}
}

// A refused reply is nudged with the refusal's reasons (the script's
// expect proves they reached the model); the corrected reply is the answer.
func TestRun_replyRefusedThenAccepted(t *testing.T) {
	turn, _ := scripted(t, jsonStage, `
[[turn]]
text = "Here is the JSON: {\"safe\": true}"

[[turn]]
expect = "Your reply was checked as the answer and refused:\nThe answer is not well-formed JSON"
text = "{\"safe\": true}"
`)
	res := runTurn(context.Background(), turn, &events{})
	ended(t, res, engine.StatusAnswered, "end_turn")
	flagsAre(t, res, engine.FlagAnswerFromReply)
	if st := stageStatus(t, turn, "001-answer@1"); st.Repairs != 1 || st.Revisits != 1 {
		t.Errorf("status.json = %+v; want 1 repair, 1 revisit", st)
	}
}

// The preamble a text-only model writes is refused as one, through the
// same checks a submit_output call meets, and the reason reaches the model.
func TestRun_replyPreambleRefused(t *testing.T) {
	for _, tt := range []struct{ name, format, bad, reason, good string }{
		{"json lead-in", "json", `Here is the JSON: {"safe": true}`, `the answer starts with text before the JSON value ("Here is the JSON:")`, `{"safe": true}`},
		{"json fence", "json", "```json\n{\"safe\": true}\n```", "wrapped in a ``` code fence", `{"safe": true}`},
		{"yaml", "yaml", "Here you go:\nsafe: true\nissues: []", `the answer starts with text before the YAML document ("Here you go:")`, "safe: true"},
		{"csv", "csv", "Here is the table:\n\na,b\n1,2", "the answer starts with text before", "a,b\n1,2"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			turn, _ := scripted(t, answerStage+"[stages.answer.output]\nformat = \""+tt.format+"\"\n",
				"[[turn]]\ntext = "+tomlString(tt.bad)+"\n[[turn]]\nexpect = "+tomlString(tt.reason)+"\ntext = "+tomlString(tt.good)+"\n")
			res := runTurn(context.Background(), turn, &events{})
			ended(t, res, engine.StatusAnswered, "end_turn")
			if st := stageStatus(t, turn, "001-answer@1"); st.Repairs != 1 {
				t.Errorf("status.json = %+v; want the reply counted as a refused submission", st)
			}
		})
	}
}

// tomlString quotes s as a TOML basic string (JSON's escapes are TOML's).
func tomlString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// answer_from_reply = false: prose is nudged, never checked.
func TestRun_answerFromReplyOff(t *testing.T) {
	turn, _ := scripted(t, noReplyStage, `
[[turn]]
text = "# Fine"
[[turn]]
expect = "You have not submitted the answer yet. Call submit_output with the answer."
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "# Fine" }
`)
	res := runTurn(context.Background(), turn, &events{})
	ended(t, res, engine.StatusAnswered, "end_turn")
	flagsAre(t, res)
}

// The second identical refused submission in a row stops the repairs:
// one last nudge, then the visit ends without the answer, and the model
// is not called again (a fourth call would find the script exhausted).
func TestRun_identicalResubmissionsStop(t *testing.T) {
	submitFenced := `
[[turn]]
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "` + "```json\\n{}\\n```" + `" }
`
	turn, sp := scripted(t, jsonStage, submitFenced+strings.Replace(submitFenced, "[[turn]]", "[[turn]]\nexpect = \"code fence\"", 1)+
		strings.Replace(submitFenced, "[[turn]]", "[[turn]]\nexpect = \"This is your last attempt in this stage.\"", 1))
	sink := &events{}
	res := runTurn(context.Background(), turn, sink)
	ended(t, res, engine.StatusCompleteNoOutput, "end_turn")
	flagsAre(t, res, engine.FlagRepairsExhausted, engine.FlagOutputForced)
	warned(t, res, "stage answer stopped repairing: the model submitted the same refused answer twice in a row")
	if len(sp.reqs) != 3 {
		t.Errorf("%d model calls, want 3 (two identical, one last attempt)", len(sp.reqs))
	}
	ev := noAnswerEvent(t, sink)
	if !strings.HasPrefix(ev.Text, "No answer: stage answer stopped repairing its refused answers (repairs_exhausted); the last was refused because: ") {
		t.Errorf("no-answer text %q", ev.Text)
	}
	if st := stageStatus(t, turn, "001-answer@1"); st.Repairs != 3 || st.Revisits != 1 {
		t.Errorf("status.json = %+v; want 3 repairs, 1 revisit", st)
	}

	// Without revisits there is no last attempt: it stops at the second.
	turn, sp = scripted(t, jsonStageWith("max_revisits = 0\n"), submitFenced+submitFenced)
	res = runTurn(context.Background(), turn, &events{})
	flagsAre(t, res, engine.FlagRepairsExhausted, engine.FlagOutputForced)
	if len(sp.reqs) != 2 {
		t.Errorf("max_revisits = 0: %d model calls, want 2", len(sp.reqs))
	}

	// A repeat that then corrects itself is answered on its last attempt.
	turn, _ = scripted(t, jsonStage, submitFenced+submitFenced+`
[[turn]]
expect = "last attempt"
text = "{}"
`)
	res = runTurn(context.Background(), turn, &events{})
	ended(t, res, engine.StatusAnswered, "end_turn")
	flagsAre(t, res, engine.FlagRepairsExhausted, engine.FlagAnswerFromReply)

	// The model's whitespace around the JSON does not make a repeat a new
	// submission.
	spaced := func(sp string) string {
		return "[[turn]]\n[[turn.tool_calls]]\nname = \"submit_output\"\nraw_arguments = '{" + sp + "\"content\":" + sp + "\"```json\\n{}\\n```\"}'\n"
	}
	turn, sp = scripted(t, jsonStageWith("max_revisits = 0\n"), spaced("")+spaced(" \t "))
	res = runTurn(context.Background(), turn, &events{})
	flagsAre(t, res, engine.FlagRepairsExhausted, engine.FlagOutputForced)
	warned(t, res, "stage answer stopped repairing: the model submitted the same refused answer twice in a row")
	if len(sp.reqs) != 2 {
		t.Errorf("whitespace apart: %d model calls, want 2", len(sp.reqs))
	}
}

// max_repairs caps refused submissions, replies included; identical ones
// need not be in a row to count.
func TestRun_repairBudget(t *testing.T) {
	turn, sp := scripted(t, jsonStageWith("max_repairs = 1\n"), `
[[turn]]
text = "Sure: {}"
[[turn]]
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "[1," }
[[turn]]
expect = "last attempt"
text = "nope"
`)
	res := runTurn(context.Background(), turn, &events{})
	ended(t, res, engine.StatusCompleteNoOutput, "end_turn")
	flagsAre(t, res, engine.FlagRepairsExhausted, engine.FlagOutputForced)
	warned(t, res, "stage answer stopped repairing: 2 refused submissions, past max_repairs = 1")
	if len(sp.reqs) != 3 {
		t.Errorf("%d model calls, want 3", len(sp.reqs))
	}
}

// submit_output(unavailable) ends the run: status unavailable, the reason
// in the result and in the closing no-answer event; no final answer.
func TestRun_unavailable(t *testing.T) {
	turn, sp := scripted(t, twoStages, `
[[turn]]
[[turn.tool_calls]]
name = "transition"
arguments = { to = "report" }
[[turn]]
[[turn.tool_calls]]
name = "submit_output"
arguments = { unavailable = "The file auth.go does not exist." }
`)
	sink := &events{}
	res := runTurn(context.Background(), turn, sink)
	ended(t, res, engine.StatusUnavailable, "end_turn")
	if res.Answer != nil || res.Unavailable != "The file auth.go does not exist." {
		t.Errorf("answer %v, unavailable %q", res.Answer, res.Unavailable)
	}
	ev := noAnswerEvent(t, sink)
	if ev.Text != "No answer: the model declared it unavailable: The file auth.go does not exist." || ev.Answer.Unavailable != res.Unavailable || ev.Answer.Status != engine.StatusUnavailable {
		t.Errorf("no-answer event %q %+v", ev.Text, ev.Answer)
	}
	var schema string
	for _, tool := range sp.reqs[1].Tools {
		if tool.Name == blueprint.ToolSubmitOutput {
			schema = string(tool.Schema)
		}
	}
	if !strings.Contains(schema, `"unavailable"`) {
		t.Errorf("submit_output's schema does not offer unavailable: %s", schema)
	}
	rr, err := turn.Store.ReadRun(turn.RunID)
	if err != nil || rr.Status != engine.StatusUnavailable || rr.Unavailable != res.Unavailable || rr.FinalOutput != nil || rr.NoAnswer != res.NoAnswer {
		t.Errorf("run.json = %+v (%v)", rr, err)
	}
}

// allow_unavailable = false refuses it as the call's result: the stage
// must answer, and the schema does not offer it.
func TestRun_unavailableRefused(t *testing.T) {
	turn, sp := scripted(t, answerStage+"allow_unavailable = false\n", `
[[turn]]
[[turn.tool_calls]]
name = "submit_output"
arguments = { unavailable = "no data" }
[[turn]]
expect = "This stage must answer"
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "Best effort." }
`)
	res := runTurn(context.Background(), turn, &events{})
	ended(t, res, engine.StatusAnswered, "end_turn")
	for _, tool := range sp.reqs[0].Tools {
		if tool.Name == blueprint.ToolSubmitOutput && strings.Contains(string(tool.Schema), "unavailable") {
			t.Errorf("the schema offers unavailable where the stage refuses it: %s", tool.Schema)
		}
	}
	if strings.Contains(sp.reqs[0].System, "unavailable") {
		t.Errorf("the prompt offers unavailable where the stage refuses it")
	}
}

// Every run without an answer closes with one EventNoAnswer saying why:
// cancelled and failed runs too.
func TestRun_noAnswerEvent(t *testing.T) {
	for _, tt := range []struct {
		name, blueprint, model string
		cancel                 bool
		text                   string
	}{
		{"forced", noReplyStage + "max_revisits = 0\n", "[[turn]]\ntext = \"prose\"\n", false, "No answer: stage answer ended without submitting one (output_forced)"},
		{"failed", answerStage, "[[turn]]\nerror = \"boom\"\n", false, "No answer: the run failed: stage answer: script turn 1: boom"},
		{"cancelled", answerStage, "[[turn]]\ndelay_ms = 1000\ntext = \"late\"\n", true, "No answer: cancelled"},
		{"refusal", answerStage, "[[turn]]\nstop_reason = \"refusal\"\n", false, "No answer: the model refused to answer"},
		{"no answering stage", "[agent]\nname = \"doer\"\n[stages.do]\n", "[[turn]]\ntext = \"done\"\n", false, "No answer: agent doer gives none"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			turn, _ := scripted(t, tt.blueprint, tt.model)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			sink := &events{on: func(ev engine.Event) {
				if tt.cancel && ev.Kind == engine.EventPlan {
					cancel()
				}
			}}
			res := runTurn(ctx, turn, sink)
			ev := noAnswerEvent(t, sink)
			if ev.Text != tt.text || "No answer: "+res.NoAnswer != ev.Text || ev.MessageID == "" {
				t.Errorf("no-answer event %q (result %q), want %q", ev.Text, res.NoAnswer, tt.text)
			}
			if ev.Answer == nil || ev.Answer.Status != res.Status || ev.Answer.Content != "" {
				t.Errorf("no-answer record %+v", ev.Answer)
			}
		})
	}
}

// toolless plays a server that refuses tools, as Ollama answers for a
// model without the tools capability.
type toolless struct {
	llm.Model
	refused int
}

func (m *toolless) Stream(ctx context.Context, req *llm.Request, onDelta func(llm.Delta) error) (*llm.Response, error) {
	if len(req.Tools) > 0 {
		m.refused++
		return nil, fmt.Errorf("ollama:gemma3: HTTP 400 Bad Request: registry.ollama.ai/library/gemma3:latest does not support tools: %w", llm.ErrToolsUnsupported)
	}
	return m.Model.Stream(ctx, req, onDelta)
}

// A server that refuses tools has the same call made without them, a
// warning once, and the fact kept for the session: the next run calls the
// model without tools from the start, without warning again. The model
// answers by reply, and the stage with transitions goes on to its first.
func TestRun_toolsUnsupportedFallback(t *testing.T) {
	const blueprint = `
[agent]
name = "two"
[stages.look]
available_tools = ["read_file"]
[stages.look.transitions.answer]
hint = "Seen enough"
[stages.look.transitions.other]
hint = "Never"
[stages.answer]
mode = "output"
[stages.other]
mode = "output"
`
	turn, sp := scripted(t, blueprint, `
[[turn]]
text = "I looked."
[[turn]]
expect = "I looked."
text = "All fine."
[[turn]]
text = "Again fine."
`)
	tl := &toolless{Model: sp}
	turn.Models = oneModel{tl}
	support := engine.NewToolSupport()
	turn.ToolSupport = support
	res := runTurn(context.Background(), turn, &events{})
	ended(t, res, engine.StatusAnswered, "end_turn")
	if res.Answer.Stage != "answer" || res.Answer.Content != "All fine." {
		t.Errorf("answer %+v, want the reply in the first transition's stage", res.Answer)
	}
	flagsAre(t, res, engine.FlagAnswerFromReply)
	warned(t, res, "script:test cannot call tools (")
	if tl.refused != 1 || len(sp.reqs) != 2 {
		t.Errorf("%d calls refused, %d made; want 1 refused, 2 made", tl.refused, len(sp.reqs))
	}
	for _, req := range sp.reqs {
		if len(req.Tools) > 0 || strings.Contains(req.System, "submit_output") || strings.Contains(req.System, "call transition") {
			t.Errorf("a model without tools was offered or told of them:\n%s", req.System)
		}
	}
	if !strings.Contains(sp.reqs[1].System, "reply with the answer alone") {
		t.Errorf("the model is not told to answer by reply:\n%s", sp.reqs[1].System)
	}
	if support.Lacks("script:test") == "" {
		t.Error("the session did not keep what it learned")
	}

	// The next run of the session: no tools offered, no warning.
	turn2, _ := scripted(t, answerStage, "")
	turn2.Models, turn2.ToolSupport = oneModel{tl}, support
	res = runTurn(context.Background(), turn2, &events{})
	ended(t, res, engine.StatusAnswered, "end_turn")
	if tl.refused != 1 || len(res.Warnings) != 0 {
		t.Errorf("second run: %d refusals in all, warnings %q; want no new refusal, no warning", tl.refused, res.Warnings)
	}
}

// A model known to lack tools (the catalog, or tools = false in the
// config: Turn.ModelFacts) is called without them from the first call.
func TestRun_modelFactsNoTools(t *testing.T) {
	turn, sp := scripted(t, jsonStage, `
[[turn]]
text = "{\"ok\": true}"
`)
	turn.ModelFacts = func(spec string) llm.ModelFact {
		return llm.ModelFact{NoTools: "tools = false in the config"}
	}
	res := runTurn(context.Background(), turn, &events{})
	ended(t, res, engine.StatusAnswered, "end_turn")
	if len(sp.reqs[0].Tools) != 0 || len(res.Warnings) != 0 {
		t.Errorf("tools %v, warnings %q", sp.reqs[0].Tools, res.Warnings)
	}
}

// Each stage visit keeps its whole last response and answer in its
// record; a later stage's preamble clips them naming the run: path, and
// without a record says the rest is not kept.
func TestRun_clippedOutputsNameTheirRunPath(t *testing.T) {
	long := strings.Repeat("word ", 3000) // 15000 bytes, over the 8 KiB inlined
	model := `
[[turn]]
text = "` + long + `"
[[turn.tool_calls]]
name = "transition"
arguments = { to = "report" }
[[turn]]
expect = "the whole text is at run:stages/001-explore@1/last_response]"
text = "Fine."
`
	turn, _ := scripted(t, twoStages, model)
	res := runTurn(context.Background(), turn, &events{})
	ended(t, res, engine.StatusAnswered, "end_turn")
	b, err := os.ReadFile(recordPath(turn, "stages/001-explore@1/last_response"))
	if err != nil || string(b) != long {
		t.Errorf("last_response holds %d bytes (%v), want %d", len(b), err, len(long))
	}
	b, err = os.ReadFile(recordPath(turn, "stages/002-report@1/answer"))
	if err != nil || string(b) != "Fine." {
		t.Errorf("answer file %q (%v)", b, err)
	}

	turn, _ = scripted(t, twoStages, strings.Replace(model, "the whole text is at run:stages/001-explore@1/last_response]", "the rest is not kept (the run keeps no record)]", 1))
	turn.Store = nil
	ended(t, runTurn(context.Background(), turn, &events{}), engine.StatusAnswered, "end_turn")
}

// An accepted artifact is copied into the run's record, the answer keeps
// its workspace path and names the copy, later stages are told of it, and
// the copy outlives the workspace file.
func TestRun_artifactsKept(t *testing.T) {
	turn, _ := scripted(t, `
[agent]
name = "two"
[stages.write]
mode = "output"
[stages.write.transitions.report]
hint = "h"
[stages.report]
mode = "output"
`, `
[[turn]]
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "Wrote it.", artifacts = [{ name = "report", path = "out/report.md" }, { name = "copy", path = "other/report.md" }] }
[[turn.tool_calls]]
name = "transition"
arguments = { to = "report" }
[[turn]]
expect = "Artifacts:\n- report (text/markdown): out/report.md, kept at run:artifacts/report.md\n- copy (text/markdown): other/report.md, kept at run:artifacts/report-2.md\n"
text = "Done."
`)
	work := turn.Workspace.Cwd()
	for _, p := range []string{"out/report.md", "other/report.md"} {
		os.MkdirAll(filepath.Join(work, filepath.Dir(p)), 0o755)
		if err := os.WriteFile(filepath.Join(work, p), []byte("# "+p+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res := runTurn(context.Background(), turn, &events{})
	ended(t, res, engine.StatusAnswered, "end_turn")
	rr, err := turn.Store.ReadRun(turn.RunID)
	if err != nil {
		t.Fatal(err)
	}
	// The run's answer is the last stage's; the first stage's answer, with
	// its artifacts, is in its visit's record.
	if rr.FinalOutput == nil || rr.FinalOutput.Stage != "report" {
		t.Fatalf("run.json final output %+v", rr.FinalOutput)
	}
	b, err := os.ReadFile(recordPath(turn, "artifacts/report-2.md"))
	if err != nil || string(b) != "# other/report.md\n" {
		t.Errorf("copy %q (%v)", b, err)
	}
	os.RemoveAll(filepath.Join(work, "out"))
	b, err = os.ReadFile(recordPath(turn, "artifacts/report.md"))
	if err != nil || string(b) != "# out/report.md\n" {
		t.Errorf("copy %q (%v)", b, err)
	}
}

// The same warning is said once, however often its cause recurs: here a
// stage that owes the answer is visited twice and ends without it twice.
func TestRun_eachWarningOnce(t *testing.T) {
	turn, _ := scripted(t, `
[agent]
name = "loop"
[stages.answer]
mode = "output"
answer_from_reply = false
max_revisits = 0
[stages.answer.transitions.back]
hint = "h"
[stages.back]
[stages.back.transitions.answer]
hint = "h"
`, `
[[turn]]
text = "prose"
[[turn]]
[[turn.tool_calls]]
name = "transition"
arguments = { to = "back" }
[[turn]]
[[turn.tool_calls]]
name = "transition"
arguments = { to = "answer" }
[[turn]]
text = "prose"
`)
	turn.MaxModelCalls = 4
	res := runTurn(context.Background(), turn, &events{})
	n := 0
	for _, w := range res.Warnings {
		if strings.HasPrefix(w, "stage answer ended without the answer it owes") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the owed-output warning %d times in %q", n, res.Warnings)
	}
	if res.StopReason != "max_turn_requests" {
		t.Errorf("stop %s (err %v), want the run cap to end the loop", res.StopReason, res.Err)
	}
}

// An artifact over MaxArtifactCopy is not copied into the record: the
// answer keeps it without a run: path, and the warning says that `coda
// result --artifacts` cannot hand it back; one at the cap is kept.
func TestRun_artifactOverCapNotKept(t *testing.T) {
	turn, _ := scripted(t, answerStage, `
[[turn]]
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "Wrote them.", artifacts = [{ name = "big", path = "big.bin" }, { name = "edge", path = "edge.bin" }] }
`)
	work := turn.Workspace.Cwd()
	if err := os.WriteFile(filepath.Join(work, "big.bin"), make([]byte, engine.MaxArtifactCopy+1), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "edge.bin"), make([]byte, engine.MaxArtifactCopy), 0o644); err != nil {
		t.Fatal(err)
	}
	res := runTurn(context.Background(), turn, &events{})
	ended(t, res, engine.StatusAnswered, "end_turn")
	arts := res.Answer.Artifacts
	if len(arts) != 2 || arts[0].RunPath != "" || arts[1].RunPath != "run:artifacts/edge.bin" {
		t.Fatalf("artifacts %+v: want big without a run: path, edge kept", arts)
	}
	warned(t, res, fmt.Sprintf("artifact big (big.bin) is %d bytes, over the 10 MiB the run record keeps ([mime] max_part_bytes): `coda result --artifacts` cannot hand it back", engine.MaxArtifactCopy+1))
	dir := recordPath(turn, "artifacts")
	if _, err := os.Stat(filepath.Join(dir, "big.bin")); !os.IsNotExist(err) {
		t.Errorf("the big artifact was copied (%v)", err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "edge.bin")); err != nil || fi.Size() != engine.MaxArtifactCopy {
		t.Errorf("the artifact at the cap: %v %v", fi, err)
	}
}

// The config's [mime] max_part_bytes (Engine.MaxArtifactCopy) is the
// copy's limit in place of the 10 MiB: a file past it is not copied, one
// at it is.
func TestRun_artifactCopyLimit(t *testing.T) {
	turn, _ := scripted(t, answerStage, `
[[turn]]
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "Wrote them.", artifacts = [{ name = "big", path = "big.bin" }, { name = "edge", path = "edge.bin" }] }
`)
	turn.Engine.MaxArtifactCopy = 1000
	work := turn.Workspace.Cwd()
	if err := os.WriteFile(filepath.Join(work, "big.bin"), make([]byte, 1001), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "edge.bin"), make([]byte, 1000), 0o644); err != nil {
		t.Fatal(err)
	}
	res := runTurn(context.Background(), turn, &events{})
	ended(t, res, engine.StatusAnswered, "end_turn")
	if arts := res.Answer.Artifacts; len(arts) != 2 || arts[0].RunPath != "" || arts[1].RunPath != "run:artifacts/edge.bin" {
		t.Fatalf("artifacts %+v: want big without a run: path, edge kept", arts)
	}
	warned(t, res, "artifact big (big.bin) is 1001 bytes, over the 1000 bytes the run record keeps ([mime] max_part_bytes): `coda result --artifacts` cannot hand it back")
}
