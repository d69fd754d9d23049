package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/blueprint"
	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/local"
	"github.com/coda-acp/coda/engine/provider/script"
	"github.com/coda-acp/coda/outputspec"
	"github.com/coda-acp/coda/store"
)

type oneModel struct{ m llm.Model }

func (o oneModel) Model(string) (llm.Model, error) { return o.m, nil }

// events is a Sink that keeps what it receives.
type events struct {
	mu  sync.Mutex
	evs []engine.Event
	on  func(engine.Event)
}

func (e *events) Emit(_ context.Context, ev engine.Event) error {
	e.mu.Lock()
	e.evs = append(e.evs, ev)
	e.mu.Unlock()
	if e.on != nil {
		e.on(ev)
	}
	return nil
}

const twoStages = `
[agent]
name = "two"
[stages.explore]
system_prompt = "Look."
[stages.explore.transitions.report]
hint = "Seen enough"
[stages.report]
mode = "output"
`

func newTurn(t testing.TB, agent, model string) *testTurn {
	t.Helper()
	b, err := blueprint.Parse([]byte(agent), "test")
	if err != nil {
		t.Fatal(err)
	}
	sc, err := script.Parse([]byte(model), "model")
	if err != nil {
		t.Fatal(err)
	}
	outs, err := blueprint.CompileOutputs(b, outputspec.Levels{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	return &testTurn{
		Engine: &engine.Engine{Models: oneModel{script.New("script:test", sc)}, Store: store.New(filepath.Join(dir, "state"))},
		Turn: &engine.Turn{
			RunID: "run-1", SessionID: "s-1", Agent: b, Outputs: outs, Prompt: "Go.",
			UserModel: "script:test", Workspace: &local.Workspace{Dir: dir},
		},
	}
}

// A testTurn is a test's run: the engine and the turn it runs, both the
// test's to change before it runs.
type testTurn struct {
	*engine.Engine
	*engine.Turn
}

// runTurn runs t's turn on t's engine.
func runTurn(ctx context.Context, t *testTurn, sink engine.Sink) *engine.Result {
	res := t.Engine.Run(ctx, t.Turn, sink)
	res.Recorded() // the record is finished after the answer
	return res
}

// recordPath is the path of rel (slash-separated) in turn's run record.
func recordPath(turn *testTurn, rel string) string {
	return filepath.Join(turn.Store.RunDir(turn.RunID), filepath.FromSlash(rel))
}

// Cancelling in the second stage ends the run "cancelled"; the record says
// so and keeps the first stage's files.
func TestRun_cancelInSecondStage(t *testing.T) {
	turn := newTurn(t, twoStages, `
[[turn]]
text = "Looked around."
[[turn.tool_calls]]
name = "transition"
arguments = { to = "report" }

[[turn]]
delay_ms = 2000
text = ["never ", "sent"]
`)
	ctx, cancel := context.WithCancel(context.Background())
	sink := &events{on: func(ev engine.Event) {
		if ev.Kind == engine.EventPlan && ev.Stage == "report" {
			cancel()
		}
	}}
	res := runTurn(ctx, turn, sink)
	if res.Status != engine.StatusCancelled || res.StopReason != "cancelled" || res.Err != nil {
		t.Fatalf("Run = status %q, stop %q, err %v; want cancelled", res.Status, res.StopReason, res.Err)
	}
	rr, err := turn.Store.ReadRun("run-1")
	if err != nil {
		t.Fatal(err)
	}
	if rr.Status != engine.StatusCancelled || rr.FinalOutput != nil {
		t.Errorf("run.json: status %q, finalOutput %v; want cancelled, none", rr.Status, rr.FinalOutput)
	}
	first := recordPath(turn, "stages/001-explore@1")
	for _, f := range []string{"prompt.md", "response.md", "status.json"} {
		if _, err := os.Stat(filepath.Join(first, f)); err != nil {
			t.Errorf("the first stage's %s is missing: %v", f, err)
		}
	}
	resp, _ := os.ReadFile(filepath.Join(first, "response.md"))
	if !strings.Contains(string(resp), "Looked around.") {
		t.Errorf("response.md = %q, want the stage's reply", resp)
	}
	st := stageStatus(t, turn, "002-report@1")
	if st.Outcome != "cancelled" || !strings.Contains(st.Error, "canceled") {
		t.Errorf("second stage status = %+v, want ended by the cancellation", st)
	}
}

// An answered run records its answer in run.json, and the final answer is
// the last event, sent once.
func TestRun_answerRecorded(t *testing.T) {
	turn := newTurn(t, twoStages, `
[[turn]]
[[turn.tool_calls]]
name = "transition"
arguments = { to = "report" }

[[turn]]
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "All fine." }
`)
	sink := &events{}
	res := runTurn(context.Background(), turn, sink)
	if res.Status != engine.StatusAnswered || res.Answer == nil {
		t.Fatalf("Run = %+v, want answered", res)
	}
	last := sink.evs[len(sink.evs)-1]
	if last.Kind != engine.EventFinalAnswer || last.Answer.Content != "All fine." {
		t.Errorf("last event = %+v, want the final answer", last)
	}
	n := 0
	for _, ev := range sink.evs {
		if ev.Kind == engine.EventFinalAnswer {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d final answers sent, want 1", n)
	}
	rr, err := turn.Store.ReadRun("run-1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(res.Answer, rr.FinalOutput); diff != "" {
		t.Errorf("run.json finalOutput differs from the result (-want +got):\n%s", diff)
	}
}

// A model failure ends the run "failed" with the error; what the run did so
// far stays in the record.
func TestRun_modelFailure(t *testing.T) {
	turn := newTurn(t, twoStages, `
[[turn]]
text = "Starting."
[[turn.tool_calls]]
name = "transition"
arguments = { to = "report" }

[[turn]]
error = "503 overloaded"
`)
	res := runTurn(context.Background(), turn, &events{})
	if res.Status != engine.StatusFailed || res.Err == nil || !strings.Contains(res.Err.Error(), "503 overloaded") {
		t.Fatalf("Run = status %q err %v, want failed with the model's error", res.Status, res.Err)
	}
	rr, err := turn.Store.ReadRun("run-1")
	if err != nil {
		t.Fatal(err)
	}
	if rr.Status != engine.StatusFailed || !strings.Contains(rr.Error, "503 overloaded") {
		t.Errorf("run.json = %+v, want failed with the error", rr)
	}
}

// models resolves specs from a map; an unknown spec is unavailable.
type models map[string]llm.Model

func (m models) Model(spec string) (llm.Model, error) {
	if mod := m[spec]; mod != nil {
		return mod, nil
	}
	return nil, fmt.Errorf("%w: %s is not configured", llm.ErrModelUnavailable, spec)
}

// recorder is a Model that answers with a submission and keeps the
// requests it was sent.
type recorder struct {
	reqs []*llm.Request
}

func (r *recorder) Name() string { return "recorder" }
func (r *recorder) Stream(_ context.Context, req *llm.Request, _ func(llm.Delta) error) (*llm.Response, error) {
	r.reqs = append(r.reqs, req)
	return &llm.Response{ToolCalls: []llm.ToolCall{{ID: "c", Name: "submit_output", Arguments: json.RawMessage(`{"content":"fine"}`)}}}, nil
}

// A stage's models are tried in order: one that is not configured falls
// through to the next; --model is ignored where the stage pins its models.
func TestRun_modelFallback(t *testing.T) {
	turn := newTurn(t, `
[agent]
name = "fallback"
[stages.answer]
mode = "output"
model = { models = ["anthropic:missing", "openai:there"], allow_user_default = false }
`, "")
	rec := &recorder{}
	turn.Models = models{"openai:there": rec}
	turn.UserModel = "script:ignored"
	res := runTurn(context.Background(), turn, &events{})
	if res.Status != engine.StatusAnswered || len(rec.reqs) != 1 {
		t.Fatalf("Run = %s (%v), %d calls to the fallback; want answered through it", res.Status, res.Err, len(rec.reqs))
	}
}

// A session's earlier turns come before the new prompt in the first
// stage, in its first message, each prompt and answer framed as data.
func TestRun_history(t *testing.T) {
	turn := newTurn(t, defaultAgent, "")
	rec := &recorder{}
	turn.Models = models{"rec": rec}
	turn.UserModel = "rec"
	turn.History = []engine.Exchange{{Prompt: "What is 6×7?", Answer: "42"}}
	turn.Prompt = "And doubled?"
	runTurn(context.Background(), turn, &events{})
	if len(rec.reqs) == 0 {
		t.Fatal("the model was not called")
	}
	var got []string
	for _, m := range rec.reqs[0].Messages {
		got = append(got, string(m.Role)+": "+m.Text)
	}
	want := []string{"user: ## This session's earlier turns\n\n" +
		"<coda-data source=\"turn 1: the user's prompt\">\nWhat is 6×7?\n</coda-data>\n" +
		"<coda-data source=\"turn 1: the answer\">\n42\n</coda-data>\n" +
		"\n## The task\nAnd doubled?"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
}

const defaultAgent = `
[agent]
name = "one"
[stages.answer]
mode = "output"
`

// A long session shows the model only its latest turns, each clipped at a
// character boundary, and says how many it does not show and what the
// first of them asked; the visit's status.json counts them.
func TestRun_historyBounded(t *testing.T) {
	turn := newTurn(t, defaultAgent, "")
	rec := &recorder{}
	turn.Models = models{"rec": rec}
	turn.UserModel = "rec"
	for i := 0; i < 25; i++ {
		turn.History = append(turn.History, engine.Exchange{Prompt: fmt.Sprintf("q%d\nmore of q%d", i, i), Answer: "a"})
	}
	turn.History[24].Answer = strings.Repeat("é", 20000) // 40,000 bytes
	runTurn(context.Background(), turn, &events{})
	msgs := rec.reqs[0].Messages
	if len(msgs) != 1 {
		t.Fatalf("%d messages; want the history and the prompt in one", len(msgs))
	}
	text := msgs[0].Text
	for _, want := range []string{
		"10 earlier exchanges are not shown; the first was:\n<coda-data source=\"turn 1: the user's prompt, its first line\">\nq0\n</coda-data>",
		"<coda-data source=\"turn 11: the user's prompt\">\nq10\nmore of q10\n</coda-data>",
		"<coda-data source=\"turn 25: the answer\">",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the first message lacks %q:\n%s", want, text[:min(len(text), 600)])
		}
	}
	if strings.Contains(text, "q9\n") {
		t.Errorf("the first message shows a turn the history cut (25 keep the latest 15)")
	}
	big := text[strings.Index(text, "turn 25: the answer"):]
	if len(big) > 9000 || !utf8.ValidString(big) || !strings.Contains(big, "more bytes") {
		t.Errorf("the long answer came through as %d bytes (valid UTF-8: %v)", len(big), utf8.ValidString(big))
	}
	var status struct {
		HistoryNotShown int `json:"historyNotShown"`
	}
	b, err := os.ReadFile(recordPath(turn, "stages/001-answer@1/status.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &status); err != nil || status.HistoryNotShown != 10 {
		t.Errorf("status.json historyNotShown = %d (%v), want 10", status.HistoryNotShown, err)
	}
}

// The run ids the engine makes name runs in the store.
func TestEngine_NewID(t *testing.T) {
	if id := (&engine.Engine{}).NewID("r"); store.CheckRunID(id) != nil {
		t.Errorf("NewID(r) = %q: %v", id, store.CheckRunID(id))
	}
}
