package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/blueprint"
	"github.com/coda-acp/coda/engine/llm"
)

// The engine's rules (DESIGN §4, §6), driven by the script model against
// a Sink that keeps every event: owed output and its nudges, max_revisits,
// the precedence of max_iterations, transitions, DONE, refusal and
// max_tokens stops, the run-wide call cap, cancellation inside a tool,
// model fallback.

// spy is a Model that keeps the requests it is sent and passes them on.
type spy struct {
	llm.Model
	mu   sync.Mutex
	reqs []*llm.Request
}

func (s *spy) Stream(ctx context.Context, req *llm.Request, onDelta func(llm.Delta) error) (*llm.Response, error) {
	s.mu.Lock()
	// The engine appends to its messages after the call: keep a copy.
	cp := *req
	cp.Messages = slices.Clone(req.Messages)
	s.reqs = append(s.reqs, &cp)
	s.mu.Unlock()
	return s.Model.Stream(ctx, req, onDelta)
}

// scripted makes a turn of blueprint against a script model wrapped in a
// spy.
func scripted(t *testing.T, blueprint, model string) (*testTurn, *spy) {
	t.Helper()
	turn := newTurn(t, blueprint, model)
	sp := &spy{Model: turn.Models.(oneModel).m}
	turn.Models = oneModel{sp}
	return turn, sp
}

// toolCalls are the tool_call events of a run, by id; updates the last
// tool_call_update of each.
func toolCalls(evs []engine.Event) (calls []*engine.ToolCallEvent, last map[string]*engine.ToolCallEvent) {
	last = map[string]*engine.ToolCallEvent{}
	for _, ev := range evs {
		switch ev.Kind {
		case engine.EventToolCall:
			calls = append(calls, ev.ToolCall)
		case engine.EventToolCallUpdate:
			last[ev.ToolCall.ID] = ev.ToolCall
		}
	}
	return calls, last
}

// resultText is what a finished tool call showed.
func resultText(u *engine.ToolCallEvent) string {
	if u == nil || len(u.Content) == 0 {
		return ""
	}
	return u.Content[0].Text
}

// stageStatus reads the status.json of the stage visit dir ("001-answer@1").
func stageStatus(t testing.TB, turn *testTurn, dir string) engine.StageStatus {
	t.Helper()
	var st engine.StageStatus
	b, err := os.ReadFile(recordPath(turn, "stages/"+dir+"/status.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	return st
}

// ended fails the test unless the run ended with status and stop reason,
// and, unless it failed, without an error.
func ended(t *testing.T, res *engine.Result, status, stop string) {
	t.Helper()
	if res.Status != status || res.StopReason != stop || (status != engine.StatusFailed && res.Err != nil) {
		t.Fatalf("Run = status %q, stop %q (err %v, warnings %q); want %q, %q", res.Status, res.StopReason, res.Err, res.Warnings, status, stop)
	}
}

func flagsAre(t *testing.T, res *engine.Result, want ...string) {
	t.Helper()
	if want == nil {
		want = []string{}
	}
	if diff := cmp.Diff(want, res.Flags); diff != "" {
		t.Errorf("flags (-want +got):\n%s", diff)
	}
}

func warned(t *testing.T, res *engine.Result, want string) {
	t.Helper()
	for _, w := range res.Warnings {
		if strings.Contains(w, want) {
			return
		}
	}
	t.Errorf("warnings %q; want one containing %q", res.Warnings, want)
}

const answerStage = `
[agent]
name = "one"
[stages.answer]
mode = "output"
`

// noReplyStage takes no reply as the answer, so its model's prose is
// nudged: the owed-output rule alone.
const noReplyStage = answerStage + "answer_from_reply = false\n"

// A stage that owes the answer and replies without submitting is nudged
// and asked again; the nudge costs a revisit and an iteration.
func TestRun_owedOutputNudged(t *testing.T) {
	turn, sp := scripted(t, noReplyStage, `
[[turn]]
text = "Let me think."

[[turn]]
expect = "You have not submitted the answer yet"
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "Done." }
`)
	res := runTurn(context.Background(), turn, &events{})
	ended(t, res, engine.StatusAnswered, "end_turn")
	flagsAre(t, res)
	if len(sp.reqs) != 2 {
		t.Errorf("%d model calls, want 2", len(sp.reqs))
	}
	st := stageStatus(t, turn, "001-answer@1")
	if st.Revisits != 1 || st.Iterations != 2 || !st.Answered {
		t.Errorf("status.json = %+v; want 1 revisit, 2 iterations, answered", st)
	}
}

// Past max_revisits the run carries on without the answer, flagged
// output_forced, and the model is not asked again.
func TestRun_nudgesExhausted(t *testing.T) {
	turn, sp := scripted(t, noReplyStage+"max_revisits = 1\n", `
[[turn]]
text = "Hmm."
[[turn]]
expect = "You have not submitted the answer yet"
text = "Still thinking."
`)
	res := runTurn(context.Background(), turn, &events{})
	ended(t, res, engine.StatusCompleteNoOutput, "end_turn")
	flagsAre(t, res, engine.FlagOutputForced)
	warned(t, res, "stage answer ended without the answer it owes (nudged 1 time(s))")
	if len(sp.reqs) != 2 {
		t.Errorf("%d model calls, want 2", len(sp.reqs))
	}
}

// max_revisits = 0 forces the output at the first reply without it.
func TestRun_noRevisits(t *testing.T) {
	turn, _ := scripted(t, noReplyStage+"max_revisits = 0\n", `
[[turn]]
text = "No."
`)
	res := runTurn(context.Background(), turn, &events{})
	ended(t, res, engine.StatusCompleteNoOutput, "end_turn")
	flagsAre(t, res, engine.FlagOutputForced)
	warned(t, res, "(nudged 0 time(s))")
}

// Each nudge costs an iteration, and running out of iterations ends the
// visit first: both max_iterations_hit and output_forced are recorded
// (DESIGN §6), though revisits remain.
func TestRun_iterationsBeforeNudges(t *testing.T) {
	turn, sp := scripted(t, noReplyStage+"max_iterations = 2\nmax_revisits = 5\n", `
[[turn]]
text = "One."
[[turn]]
expect = "You have not submitted the answer yet"
text = "Two."
`)
	res := runTurn(context.Background(), turn, &events{})
	ended(t, res, engine.StatusCompleteNoOutput, "end_turn")
	flagsAre(t, res, engine.FlagMaxIterationsHit, engine.FlagOutputForced)
	want := []string{"stage answer used its 2 iterations", "stage answer ended without the answer it owes"}
	if diff := cmp.Diff(want, res.Warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	if len(sp.reqs) != 2 {
		t.Errorf("%d model calls, want 2", len(sp.reqs))
	}
	// The second nudge was said but never sent: status.json counts only
	// the one a model call carried.
	if st := stageStatus(t, turn, "001-answer@1"); st.Revisits != 1 || st.Iterations != 2 {
		t.Errorf("status.json = %+v; want 1 revisit (sent) in 2 iterations", st)
	}
}

// Transitions are offered in the blueprint's order (not sorted), a reply
// without one asks for one, and the fallback when the iterations run out
// is the first of them.
func TestRun_transitionsInOrder(t *testing.T) {
	turn, sp := scripted(t, `
[agent]
name = "order"
[stages.look]
max_iterations = 2
[stages.look.transitions.zeta]
hint = "Last letter"
[stages.look.transitions.alpha]
hint = "First letter"
[stages.zeta]
mode = "output"
[stages.alpha]
mode = "output"
`, `
[[turn]]
text = "Looked."
[[turn]]
expect = "Choose what comes next: call transition with one of: zeta, alpha."
text = "Still looking."
[[turn]]
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "Z." }
`)
	sink := &events{}
	res := runTurn(context.Background(), turn, sink)
	ended(t, res, engine.StatusAnswered, "end_turn")
	if res.Answer.Stage != "zeta" {
		t.Errorf("answered in %s, want zeta (the first transition)", res.Answer.Stage)
	}
	flagsAre(t, res, engine.FlagMaxIterationsHit)
	first := sp.reqs[0]
	if !strings.Contains(first.System, "- zeta: Last letter\n- alpha: First letter") {
		t.Errorf("system prompt lists the ways out out of order:\n%s", first.System)
	}
	var enum []string
	for _, tool := range first.Tools {
		if tool.Name == blueprint.ToolTransition {
			var schema struct {
				Properties struct {
					To struct {
						Enum []string `json:"enum"`
					} `json:"to"`
				} `json:"properties"`
			}
			if err := json.Unmarshal(tool.Schema, &schema); err != nil {
				t.Fatal(err)
			}
			enum = schema.Properties.To.Enum
		}
	}
	if diff := cmp.Diff([]string{"zeta", "alpha"}, enum); diff != "" {
		t.Errorf("transition's targets (-want +got):\n%s", diff)
	}
}

// A transition to no way out, or with arguments that are not JSON, is a
// failed call the model sees; it does not move.
func TestRun_transitionRefused(t *testing.T) {
	turn, _ := scripted(t, twoStages, `
[[turn]]
[[turn.tool_calls]]
name = "transition"
arguments = { to = "nowhere" }
[[turn.tool_calls]]
name = "transition"
raw_arguments = '{"to": '

[[turn]]
expect = "transition takes"
[[turn.tool_calls]]
name = "transition"
arguments = { to = "report", reason = "done" }

[[turn]]
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "Fine." }
`)
	sink := &events{}
	res := runTurn(context.Background(), turn, sink)
	ended(t, res, engine.StatusAnswered, "end_turn")
	calls, last := toolCalls(sink.evs)
	if got := resultText(last[calls[0].ID]); last[calls[0].ID].Status != engine.ToolFailed || !strings.Contains(got, `"nowhere" is not a way out of this stage. Choose one of: report.`) {
		t.Errorf("first transition: %s %q", last[calls[0].ID].Status, got)
	}
	if got := resultText(last[calls[1].ID]); last[calls[1].ID].Status != engine.ToolFailed || !strings.Contains(got, "transition takes") {
		t.Errorf("second transition: %s %q", last[calls[1].ID].Status, got)
	}
	if calls[2].Title != "transition" || calls[2].Kind != "think" || last[calls[2].ID].Status != engine.ToolCompleted {
		t.Errorf("the good transition: %+v, then %+v", calls[2], last[calls[2].ID])
	}
}

const owedThenReview = `
[agent]
name = "owed"
[stages.draft]
require_output = true
%s
[stages.draft.transitions.review]
hint = "Drafted"
[stages.review]
`

// A transition out of a stage that owes the answer is refused as the
// call's result, costing a revisit; submitting and transitioning in one
// reply moves on with the answer.
func TestRun_owedTransitionRefused(t *testing.T) {
	turn, _ := scripted(t, fmt.Sprintf(owedThenReview, ""), `
[[turn]]
[[turn.tool_calls]]
name = "transition"
arguments = { to = "review" }

[[turn]]
expect = "Not yet: this stage owes the answer. Call submit_output with it first, then transition to review."
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "The draft." }
[[turn.tool_calls]]
name = "transition"
arguments = { to = "review" }

[[turn]]
text = "Reviewed."
`)
	sink := &events{}
	res := runTurn(context.Background(), turn, sink)
	ended(t, res, engine.StatusAnswered, "end_turn")
	flagsAre(t, res)
	if res.Answer.Stage != "draft" || res.Answer.Content != "The draft." {
		t.Errorf("answer = %+v", res.Answer)
	}
	calls, last := toolCalls(sink.evs)
	if last[calls[0].ID].Status != engine.ToolFailed {
		t.Errorf("the owed transition was %s, want failed", last[calls[0].ID].Status)
	}
	if st := stageStatus(t, turn, "001-draft@1"); st.Revisits != 1 {
		t.Errorf("draft: %d revisits, want 1", st.Revisits)
	}
	if _, err := os.Stat(recordPath(turn, "stages/002-review@1")); err != nil {
		t.Errorf("the run did not reach review: %v", err)
	}
}

// With no revisits left the transition goes through, and the run carries
// on without the answer, flagged output_forced.
func TestRun_owedTransitionForced(t *testing.T) {
	turn, _ := scripted(t, fmt.Sprintf(owedThenReview, "max_revisits = 0"), `
[[turn]]
[[turn.tool_calls]]
name = "transition"
arguments = { to = "review" }

[[turn]]
text = "Reviewed."
`)
	res := runTurn(context.Background(), turn, &events{})
	ended(t, res, engine.StatusCompleteNoOutput, "end_turn")
	flagsAre(t, res, engine.FlagOutputForced)
	warned(t, res, "stage draft ended without the answer it owes (nudged 0 time(s))")
}

// DONE, offered under allow_complete after the stage's transitions, ends
// the run where it is.
func TestRun_doneUnderAllowComplete(t *testing.T) {
	turn, sp := scripted(t, `
[agent]
name = "done"
[stages.look]
allow_complete = true
[stages.look.transitions.answer]
hint = "Something to say"
[stages.answer]
mode = "output"
`, `
[[turn]]
[[turn.tool_calls]]
name = "transition"
arguments = { to = "DONE", reason = "nothing to do" }
`)
	sink := &events{}
	res := runTurn(context.Background(), turn, sink)
	ended(t, res, engine.StatusCompleteNoOutput, "end_turn")
	if !strings.Contains(sp.reqs[0].System, "- DONE: the whole task is finished") {
		t.Errorf("DONE is not offered:\n%s", sp.reqs[0].System)
	}
	var plan []engine.PlanEntry
	for _, ev := range sink.evs {
		if ev.Kind == engine.EventPlan {
			plan = ev.Plan
		}
	}
	if diff := cmp.Diff([]engine.PlanEntry{{Content: "look", Status: engine.PlanCompleted}}, plan); diff != "" {
		t.Errorf("plan (-want +got):\n%s", diff)
	}
}

// A refusal ends the run with stopReason refusal, even where the answer
// is owed: nudging a model that refused would not help. The answer is
// unavailable, in the model's words (DESIGN §17).
func TestRun_refusalStop(t *testing.T) {
	turn, sp := scripted(t, answerStage, `
[[turn]]
text = "I can't help with that."
stop_reason = "refusal"
`)
	res := runTurn(context.Background(), turn, &events{})
	ended(t, res, engine.StatusUnavailable, "refusal")
	if len(sp.reqs) != 1 || res.LastReply != "I can't help with that." || res.Unavailable != "I can't help with that." {
		t.Errorf("%d calls, last reply %q, unavailable %q", len(sp.reqs), res.LastReply, res.Unavailable)
	}
	if st := stageStatus(t, turn, "001-answer@1"); st.Outcome != "unavailable" {
		t.Errorf("status.json outcome %q", st.Outcome)
	}
}

// Where the stage takes no unavailable (allow_unavailable = false), a
// refusal still ends the run with stopReason refusal, since nudging would
// not help, but not as unavailable, the status the stage said it never
// gives: the run has no answer, and its closing message gives the model's
// words.
func TestRun_refusalWhereUnavailableIsNot(t *testing.T) {
	turn, sp := scripted(t, answerStage+"allow_unavailable = false\n", `
[[turn]]
text = "I can't help with that."
stop_reason = "refusal"
`)
	sink := &events{}
	res := runTurn(context.Background(), turn, sink)
	ended(t, res, engine.StatusCompleteNoOutput, "refusal")
	if len(sp.reqs) != 1 || res.Unavailable != "" || res.Answer != nil {
		t.Errorf("%d calls, unavailable %q, answer %+v", len(sp.reqs), res.Unavailable, res.Answer)
	}
	if want := "the model refused to answer: I can't help with that."; res.NoAnswer != want {
		t.Errorf("no answer %q, want %q", res.NoAnswer, want)
	}
	if st := stageStatus(t, turn, "001-answer@1"); st.Outcome != "refusal" {
		t.Errorf("status.json outcome %q", st.Outcome)
	}
}

// A reply cut at the output token limit ends a stage that owes nothing
// with stopReason max_tokens.
func TestRun_maxTokensStop(t *testing.T) {
	turn, _ := scripted(t, `
[agent]
name = "free"
[stages.chat]
`, `
[[turn]]
text = "And then the"
stop_reason = "max_tokens"
`)
	res := runTurn(context.Background(), turn, &events{})
	ended(t, res, engine.StatusCompleteNoOutput, "max_tokens")
}

// Where the answer is owed, a cut reply asks for a shorter answer without
// spending a revisit; a submit_output call whose arguments were cut is
// answered as cut after so many bytes, not as malformed (DESIGN §17).
func TestRun_maxTokensOwed(t *testing.T) {
	turn, _ := scripted(t, answerStage+"max_revisits = 0\n", `
[[turn]]
text = "Here is a very long"
stop_reason = "max_tokens"

[[turn]]
expect = "Your answer was cut at the token limit after 19 bytes: shorten it."
stop_reason = "max_tokens"
[[turn.tool_calls]]
name = "submit_output"
raw_arguments = '{"content": "Here is a ve'

[[turn]]
expect = "Your answer was cut at the token limit after 25 bytes: shorten it. Nothing was recorded."
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "Short." }
`)
	res := runTurn(context.Background(), turn, &events{})
	ended(t, res, engine.StatusAnswered, "end_turn")
	if st := stageStatus(t, turn, "001-answer@1"); st.Revisits != 0 || st.Iterations != 3 {
		t.Errorf("status.json = %+v; want 0 revisits in 3 iterations", st)
	}
}

// The run-wide cap on model calls ends the run with max_turn_requests,
// whatever the stage's own limits.
func TestRun_maxModelCalls(t *testing.T) {
	turn, sp := scripted(t, `
[agent]
name = "busy"
[stages.work]
available_tools = ["noop"]
`, strings.Repeat("[[turn]]\n[[turn.tool_calls]]\nname = \"noop\"\n", 5))
	turn.Engine.Tools = map[string]engine.Tool{"noop": noop{}}
	turn.MaxModelCalls = 3
	res := runTurn(context.Background(), turn, &events{})
	ended(t, res, engine.StatusCompleteNoOutput, "max_turn_requests")
	warned(t, res, "the run stopped after 3 model calls (the run-wide cap)")
	if len(sp.reqs) != 3 {
		t.Errorf("%d model calls, want 3", len(sp.reqs))
	}
}

// blocker is a tool that cancels the run and then blocks until its
// context is done, as a long command would.
type blocker struct {
	cancel context.CancelFunc
	ran    bool
}

func (*blocker) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: "block", Schema: json.RawMessage(`{"type":"object"}`)}
}
func (*blocker) Kind() string { return "execute" }
func (b *blocker) Run(ctx context.Context, call *engine.Call) engine.ToolResult {
	b.ran = true
	b.cancel()
	<-ctx.Done()
	return engine.Errorf("interrupted")
}

// Cancelling while a tool runs stops the tool through its context, marks
// its call failed ("Cancelled.", never left running) and ends the run
// cancelled.
func TestRun_cancelDuringToolCall(t *testing.T) {
	turn, sp := scripted(t, `
[agent]
name = "cmd"
[stages.work]
available_tools = ["block"]
`, `
[[turn]]
[[turn.tool_calls]]
name = "block"
[[turn]]
text = "never asked"
`)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b := &blocker{cancel: cancel}
	turn.Engine.Tools = map[string]engine.Tool{"block": b}
	turn.Workspace = allowAll{turn.Workspace}
	sink := &events{}
	res := runTurn(ctx, turn, sink)
	ended(t, res, engine.StatusCancelled, "cancelled")
	if !b.ran || len(sp.reqs) != 1 {
		t.Fatalf("tool ran %v, %d model calls; want the tool run after one call", b.ran, len(sp.reqs))
	}
	calls, last := toolCalls(sink.evs)
	if len(calls) != 1 || last[calls[0].ID].Status != engine.ToolFailed || resultText(last[calls[0].ID]) != "Cancelled." {
		t.Errorf("tool call %+v ended %+v; want failed, Cancelled.", calls, last)
	}
	rr, err := turn.Store.ReadRun(turn.RunID)
	if err != nil || rr.Status != engine.StatusCancelled {
		t.Errorf("run.json: %+v, %v", rr, err)
	}
}

// allowAll is a Workspace whose user approves everything.
type allowAll struct{ engine.Workspace }

func (allowAll) RequestPermission(context.Context, engine.PermissionRequest) (bool, error) {
	return true, nil
}

// flaky is a Model that is unavailable, after streaming text when told to.
type flaky struct {
	calls    int
	midReply bool
}

func (f *flaky) Name() string { return "flaky" }
func (f *flaky) Stream(_ context.Context, _ *llm.Request, onDelta func(llm.Delta) error) (*llm.Response, error) {
	f.calls++
	if f.midReply {
		if err := onDelta(llm.Delta{Text: "Partly"}); err != nil {
			return nil, err
		}
	}
	return nil, fmt.Errorf("%w: model not found", llm.ErrModelUnavailable)
}

// A model that is unavailable when called falls through to the next; the
// one that answered is asked first from then on.
func TestRun_modelFallbackSticks(t *testing.T) {
	turn, _ := scripted(t, `
[agent]
name = "fb"
[stages.answer]
mode = "output"
model = { models = ["a:gone", "b:there"], allow_user_default = false }
`, `
[[turn]]
text = "Thinking."
[[turn]]
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "Yes." }
`)
	gone := &flaky{}
	turn.Models = models{"a:gone": gone, "b:there": turn.Models.(oneModel).m}
	res := runTurn(context.Background(), turn, &events{})
	ended(t, res, engine.StatusAnswered, "end_turn")
	if gone.calls != 1 {
		t.Errorf("the unavailable model was called %d times, want once", gone.calls)
	}
}

// A model that fails after its reply has begun is not replaced: the user
// has seen part of one reply, and another model's would not follow it.
func TestRun_noFallbackMidReply(t *testing.T) {
	turn, _ := scripted(t, `
[agent]
name = "fb"
[stages.answer]
mode = "output"
model = { models = ["a:gone", "b:there"], allow_user_default = false }
`, `
[[turn]]
text = "never"
`)
	gone := &flaky{midReply: true}
	turn.Models = models{"a:gone": gone, "b:there": turn.Models.(oneModel).m}
	res := runTurn(context.Background(), turn, &events{})
	if res.Status != engine.StatusFailed || !errors.Is(res.Err, llm.ErrModelUnavailable) {
		t.Fatalf("Run = %s, %v; want failed with the first model's error", res.Status, res.Err)
	}
}

// No model at all fails the run, saying how to give the stage one; every
// model unavailable fails it with the last one's error.
func TestRun_noModel(t *testing.T) {
	turn, _ := scripted(t, answerStage, "")
	turn.UserModel = ""
	res := runTurn(context.Background(), turn, &events{})
	if res.Status != engine.StatusFailed || !strings.Contains(fmt.Sprint(res.Err), "stage answer has no model") {
		t.Errorf("Run = %s, %v", res.Status, res.Err)
	}
	turn, _ = scripted(t, answerStage, "")
	turn.Models = models{}
	res = runTurn(context.Background(), turn, &events{})
	if res.Status != engine.StatusFailed || !errors.Is(res.Err, llm.ErrModelUnavailable) {
		t.Errorf("Run = %s, %v", res.Status, res.Err)
	}
}

// A Sink that fails (the client is gone) stops the turn.
func TestRun_sinkError(t *testing.T) {
	turn, _ := scripted(t, answerStage, `
[[turn]]
text = "Hello"
`)
	gone := errors.New("client gone")
	res := runTurn(context.Background(), turn, engine.SinkFunc(func(_ context.Context, ev engine.Event) error {
		if ev.Kind == engine.EventText {
			return gone
		}
		return nil
	}))
	if res.Status != engine.StatusFailed || !errors.Is(res.Err, gone) {
		t.Errorf("Run = %s, %v; want failed with the sink's error", res.Status, res.Err)
	}
}

// panicky is a tool with a bug.
type panicky struct{}

func (panicky) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: "panicky", Schema: json.RawMessage(`{"type":"object"}`)}
}
func (panicky) Kind() string { return "read" }
func (panicky) Run(context.Context, *engine.Call) engine.ToolResult {
	panic("index out of range")
}

// A call to a tool the stage does not have, and a tool that panics, are
// failed calls the model sees; the run goes on.
func TestRun_toolFailures(t *testing.T) {
	turn, _ := scripted(t, `
[agent]
name = "t"
[stages.answer]
mode = "output"
available_tools = ["panicky", "missing"]
`, `
[[turn]]
[[turn.tool_calls]]
name = "shell"
[[turn.tool_calls]]
name = "panicky"

[[turn]]
expect = "The tool panicky failed inside coda: index out of range"
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "ok" }
`)
	turn.Engine.Tools = map[string]engine.Tool{"panicky": panicky{}}
	sink := &events{}
	res := runTurn(context.Background(), turn, sink)
	ended(t, res, engine.StatusAnswered, "end_turn")
	warned(t, res, `stage answer lists tool "missing", which coda does not have`)
	calls, last := toolCalls(sink.evs)
	if got := resultText(last[calls[0].ID]); got != `There is no tool "shell" in this stage. The tools you can call: panicky, submit_output.` {
		t.Errorf("unknown tool: %q", got)
	}
	if calls[1].Kind != "read" || last[calls[1].ID].Status != engine.ToolFailed {
		t.Errorf("panicky: %+v then %+v", calls[1], last[calls[1].ID])
	}
}

// A refused submission goes back with its reasons; the identical one again
// is named as such, and, being the second in a row, stops the repairs: the
// model's one last attempt passes and is recorded.
func TestRun_refusedThenAccepted(t *testing.T) {
	turn, _ := scripted(t, answerStage+"[stages.answer.output]\nformat = \"json\"\n", `
[[turn]]
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "not json" }

[[turn]]
expect = "JSON"
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "not json" }

[[turn]]
expect = "This is your last attempt in this stage."
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = '{"ok": true}' }
`)
	sink := &events{}
	res := runTurn(context.Background(), turn, sink)
	ended(t, res, engine.StatusAnswered, "end_turn")
	flagsAre(t, res, engine.FlagRepairsExhausted)
	calls, last := toolCalls(sink.evs)
	if got := resultText(last[calls[1].ID]); !strings.HasPrefix(got, "This answer is identical to a refused submission.") {
		t.Errorf("the repeat's result: %q", got)
	}
	if calls[0].Title != "submit_output (json)" || last[calls[0].ID].Status != engine.ToolFailed || last[calls[2].ID].Status != engine.ToolCompleted {
		t.Errorf("calls %+v; last %+v", calls, last)
	}
	if len(last[calls[2].ID].Content) != 0 {
		t.Errorf("an accepted submission shows %+v; want nothing", last[calls[2].ID].Content)
	}
}

// An answer over the answer cap but within submit_output's argument cap is
// cut, recorded as truncated, and does not end the stage: the model may
// submit a shorter one, and the stage ends when it replies without a call.
func TestRun_truncatedAnswerKeepsStageOpen(t *testing.T) {
	long := strings.Repeat("a", 300<<10)
	turn, _ := scripted(t, answerStage, `
[[turn]]
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "`+long+`" }

[[turn]]
expect = "Submit a shorter answer."
text = "That will do."
`)
	res := runTurn(context.Background(), turn, &events{})
	ended(t, res, engine.StatusAnswered, "end_turn")
	if !res.Answer.Truncated || !slices.Contains(res.Flags, "truncated") {
		t.Errorf("answer truncated %v, flags %q", res.Answer.Truncated, res.Flags)
	}
}

// Later stages see what earlier ones said and answered.
func TestRun_preamble(t *testing.T) {
	turn, sp := scripted(t, fmt.Sprintf(owedThenReview, ""), `
[[turn]]
text = "Drafting now."
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "The draft." }
[[turn.tool_calls]]
name = "transition"
arguments = { to = "review" }

[[turn]]
text = "Reviewed."
`)
	res := runTurn(context.Background(), turn, &events{})
	ended(t, res, engine.StatusAnswered, "end_turn")
	first := sp.reqs[1].Messages[0].Text
	for _, want := range []string{"## What earlier stages produced", "### Stage draft", "<coda-data source=\"stage draft: last response\">\nDrafting now.\n</coda-data>", "<coda-data source=\"stage draft: answer\">\nThe draft.\n</coda-data>", "## The task\nGo."} {
		if !strings.Contains(first, want) {
			t.Errorf("review's first message lacks %q:\n%s", want, first)
		}
	}
}
