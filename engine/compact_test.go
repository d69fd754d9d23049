package engine_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/provider/ollama"
	"github.com/coda-acp/coda/engine/provider/ollama/ollamatest"
	"github.com/coda-acp/coda/engine/provider/script"
	"github.com/coda-acp/coda/engine/tools"
)

// readingAgent reads files, then answers.
const readingAgent = `
[agent]
name = "reader"
[stages.answer]
mode = "output"
system_prompt = "Read the files, then answer."
available_tools = ["read_file"]
`

// readsThenAnswers is a script model of window tokens that reads the files
// named, one a call, then submits; a request past its window is refused as
// a server refuses it.
func readsThenAnswers(window int, files ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "context_window = %d\n", window)
	for _, f := range files {
		fmt.Fprintf(&b, "[[turn]]\n[[turn.tool_calls]]\nname = \"read_file\"\narguments = { path = %q }\n", f)
	}
	b.WriteString("[[turn]]\n[[turn.tool_calls]]\nname = \"submit_output\"\narguments = { content = \"read them all\" }\n")
	return b.String()
}

// fileNames are the files writeNumbered writes: f1.txt to fN.txt.
func fileNames(n int) []string {
	var names []string
	for i := 1; i <= n; i++ {
		names = append(names, fmt.Sprintf("f%d.txt", i))
	}
	return names
}

// writeNumbered writes n files of size bytes each into the turn's workspace,
// f1.txt to fN.txt, each line naming its file.
func writeNumbered(t *testing.T, turn *testTurn, n, size int) {
	t.Helper()
	for i, name := range fileNames(n) {
		line := fmt.Sprintf("this is line of file %d\n", i+1)
		text := strings.Repeat(line, size/len(line)+1)[:size]
		if err := os.WriteFile(filepath.Join(turn.Workspace.Cwd(), name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// A tool loop that outgrows the window is compacted before the call that
// would pass 85 % of it: the oldest tool results become notes naming the
// run: path of their whole text, which the record keeps and a later
// read_file reads back; the system prompt, the tools (submit_output with
// them) and the latest results stay whole; each compaction is a line in
// status.json and response.md, a warning and an event; the run answers.
// Without the fitting, the script model would refuse the fifth call.
func TestCompaction_toolResults(t *testing.T) {
	turn := newTurn(t, readingAgent, readsThenAnswers(4000, fileNames(5)...))
	writeNumbered(t, turn, 5, 3000)
	turn.Engine.Tools = tools.Builtin()
	rec := &recording{}
	turn.Models = models{"script:test": rec.wrap(turn.Models)}
	sink := &events{}
	res := runTurn(context.Background(), turn, sink)
	if res.Status != engine.StatusAnswered {
		t.Fatalf("Run = %s (%v), want answered; warnings %q", res.Status, res.Err, res.Warnings)
	}

	st := stageStatus(t, turn, "001-answer@1")
	if len(st.Compactions) == 0 {
		t.Fatalf("status.json records no compaction: %+v", st)
	}
	line := st.Compactions[0]
	for _, want := range []string{"compacted before call ", "of stage answer", "over 85% of script:test's 4000-token window", "tool result", "read_file", "now about"} {
		if !strings.Contains(line, want) {
			t.Errorf("the compaction line %q lacks %q", line, want)
		}
	}
	var compactions []engine.Event
	for _, ev := range sink.evs {
		if ev.Kind == engine.EventCompaction {
			compactions = append(compactions, ev)
		}
	}
	if len(compactions) != len(st.Compactions) || compactions[0].Text != line || compactions[0].MessageID == "" {
		t.Errorf("events %+v, want one per compaction line %q", compactions, st.Compactions)
	}
	if !contains(res.Warnings, line) {
		t.Errorf("warnings %q lack the compaction line", res.Warnings)
	}
	resp, _ := os.ReadFile(recordPath(turn, "stages/001-answer@1/response.md"))
	if !strings.Contains(string(resp), "Compaction: "+line) {
		t.Errorf("response.md lacks the compaction line")
	}

	// Every call fitted; the last one still had the system prompt, all the
	// tools and the latest result whole, and notes for the oldest.
	last := rec.reqs[len(rec.reqs)-1]
	if !strings.Contains(last.System, "Read the files, then answer.") || len(last.Tools) != 2 || last.Tools[1].Name != "submit_output" {
		t.Errorf("the last call's system prompt or tools were cut: %d tools", len(last.Tools))
	}
	var notes, whole int
	var path string
	for _, m := range last.Messages {
		if m.Role != llm.RoleTool {
			continue
		}
		if strings.HasPrefix(m.Text, "[cut to fit the model's context window: ") {
			notes++
			if path == "" {
				_, after, _ := strings.Cut(m.Text, " is at run:")
				path, _, _ = strings.Cut(after, ";")
			}
		} else {
			whole++
		}
	}
	if notes == 0 || whole == 0 || path == "" {
		t.Fatalf("the last call has %d notes and %d whole results (path %q); want both", notes, whole, path)
	}
	kept, err := os.ReadFile(recordPath(turn, path))
	if err != nil {
		t.Fatalf("the cut result's run: path: %v", err)
	}
	if !strings.Contains(string(kept), `"path":"f1.txt","size":3000`) || strings.Count(string(kept), "this is line of file 1") < 100 {
		t.Errorf("the kept result %q is not f1.txt's whole", kept[:min(len(kept), 200)])
	}
	if !strings.HasPrefix(path, "stages/001-answer@1/cut/") {
		t.Errorf("the cut result is kept at %s", path)
	}
}

// A cut result's run: path is one the model can read back with read_file.
func TestCompaction_readBack(t *testing.T) {
	model := readsThenAnswers(4000, fileNames(4)...)
	// Before answering, read the first cut result back.
	model = strings.Replace(model, "[[turn]]\n[[turn.tool_calls]]\nname = \"submit_output\"",
		"[[turn]]\n[[turn.tool_calls]]\nname = \"read_file\"\narguments = { path = \"run:stages/001-answer@1/cut/1-read_file.txt\" }\n[[turn]]\nexpect = \"this is line of file 1\"\n[[turn.tool_calls]]\nname = \"submit_output\"", 1)
	turn := newTurn(t, readingAgent, model)
	writeNumbered(t, turn, 4, 3000)
	turn.Engine.Tools = tools.Builtin()
	res := runTurn(context.Background(), turn, &events{})
	if res.Status != engine.StatusAnswered {
		t.Fatalf("Run = %s (%v), want answered; warnings %q", res.Status, res.Err, res.Warnings)
	}
}

// A request that cannot be made to fit (a task larger than the window by
// itself) is never sent: the visit ends with that reason, not the server's
// refusal.
func TestCompaction_cannotFit(t *testing.T) {
	turn := newTurn(t, readingAgent, readsThenAnswers(2000))
	turn.Engine.Tools = tools.Builtin()
	turn.Prompt = strings.Repeat("a large task ", 2000)
	res := runTurn(context.Background(), turn, &events{})
	if res.Status != engine.StatusFailed || res.Err == nil {
		t.Fatalf("Run = %s (%v), want failed", res.Status, res.Err)
	}
	msg := res.Err.Error()
	for _, want := range []string{"the request does not fit script:test's context window of 2000 tokens", "with nothing coda may cut", "use a model with a larger window"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "HTTP 400") {
		t.Errorf("the request was sent: %s", msg)
	}
}

// The session's earlier turns go, oldest first, when the tool results are
// not enough: the history says how many it does not show; the prompt.md of
// the visit is the request as sent.
func TestCompaction_history(t *testing.T) {
	turn := newTurn(t, readingAgent, readsThenAnswers(9000))
	turn.Engine.Tools = tools.Builtin()
	for i := 1; i <= 6; i++ {
		turn.History = append(turn.History, engine.Exchange{Prompt: fmt.Sprintf("question %d: %s", i, strings.Repeat("words ", 600)), Answer: fmt.Sprintf("answer %d", i), RunID: fmt.Sprintf("r-%d", i)})
	}
	rec := &recording{}
	turn.Models = models{"script:test": rec.wrap(turn.Models)}
	res := runTurn(context.Background(), turn, &events{})
	if res.Status != engine.StatusAnswered {
		t.Fatalf("Run = %s (%v), want answered", res.Status, res.Err)
	}
	first := rec.reqs[0].Messages[0].Text
	if strings.Contains(first, `source="turn 1: the user's prompt"`) || !strings.Contains(first, `source="turn 6: the user's prompt"`) || !strings.Contains(first, "earlier exchanges are not shown; the first was:") {
		t.Errorf("the first message, after the cut:\n%s", first[:min(len(first), 600)])
	}
	st := stageStatus(t, turn, "001-answer@1")
	if len(st.Compactions) != 1 || !strings.Contains(st.Compactions[0], "earlier turns of the session (runs r-1") {
		t.Errorf("compactions %q", st.Compactions)
	}
	prompt, _ := os.ReadFile(recordPath(turn, "stages/001-answer@1/prompt.md"))
	if strings.Contains(string(prompt), "run r-1]") || !strings.Contains(string(prompt), "run r-6]") {
		t.Errorf("prompt.md names the cut turns, or not the kept ones:\n%s", prompt)
	}
}

// recording wraps the turn's models, keeping each request as sent.
type recording struct{ reqs []*llm.Request }

func (r *recording) wrap(ms llm.Models) llm.Model {
	m, _ := ms.Model("script:test")
	return recorded{m, r}
}

type recorded struct {
	llm.Model
	r *recording
}

func (m recorded) ContextWindow(ctx context.Context) int {
	if w, ok := m.Model.(llm.Windowed); ok {
		return w.ContextWindow(ctx)
	}
	return 0
}

func (m recorded) Stream(ctx context.Context, req *llm.Request, onDelta func(llm.Delta) error) (*llm.Response, error) {
	cp := *req
	cp.Messages = append([]llm.Message(nil), req.Messages...)
	m.r.reqs = append(m.r.reqs, &cp)
	return m.Model.Stream(ctx, req, onDelta)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Against Ollama's fake, which gives a prompt options.num_ctx tokens and
// cuts a longer one from the front, silently (ollama/ollama#18107): a tool
// loop that outgrows num_ctx is compacted before it would pass it, so no
// request is cut by the server, every one keeps its system prompt and
// submit_output's definition, and the run answers.
func TestCompaction_ollama(t *testing.T) {
	f := ollamatest.NewServer(ollamatest.Model{Name: "qwen3:8b", Arch: "qwen3", ContextLength: 4096, Capabilities: []string{"completion", "tools"}})
	t.Cleanup(f.Close)
	const reads = 8
	f.Reply = func(n int, _ *ollamatest.Request) ollamatest.Turn {
		if n < reads {
			return ollamatest.Turn{Calls: []ollamatest.Call{{Name: "read_file", Args: fmt.Sprintf(`{"path":"f%d.txt"}`, n+1)}}}
		}
		return ollamatest.Turn{Calls: []ollamatest.Call{{Name: "submit_output", Args: `{"content":"read them all"}`}}}
	}
	turn := newTurn(t, readingAgent, "")
	writeNumbered(t, turn, reads, 3000)
	turn.Engine.Tools = tools.Builtin()
	turn.Models = models{"ollama:qwen3:8b": ollama.New("qwen3:8b", ollama.Options{Name: "ollama:qwen3:8b", BaseURL: f.URL})}
	turn.UserModel = "ollama:qwen3:8b"
	res := runTurn(context.Background(), turn, &events{})
	if res.Status != engine.StatusAnswered {
		t.Fatalf("Run = %s (%v), want answered; warnings %q", res.Status, res.Err, res.Warnings)
	}
	reqs := f.Requests()
	if len(reqs) != reads+1 {
		t.Fatalf("%d calls, want %d", len(reqs), reads+1)
	}
	for i, r := range reqs {
		if r.Truncated || r.NumCtx != 4096 || !strings.Contains(r.Seen, "Read the files, then answer.") || !strings.Contains(r.Seen, "submit_output") {
			t.Errorf("call %d: num_ctx %d, %d tokens, truncated %v, or the system prompt or submit_output is gone", i+1, r.NumCtx, r.Tokens, r.Truncated)
		}
	}
	if st := stageStatus(t, turn, "001-answer@1"); len(st.Compactions) == 0 {
		t.Errorf("no compaction recorded: %d tokens at the last call", reqs[len(reqs)-1].Tokens)
	}
}

// A request too large for a stage's first model goes to its next, which
// may have a larger window: the first is never sent it.
func TestCompaction_fallbackLarger(t *testing.T) {
	turn := newTurn(t, `
[agent]
name = "fallback"
[stages.answer]
mode = "output"
model = { models = ["script:small", "script:big"], allow_user_default = false }
`, "")
	small, err := script.Parse([]byte(readsThenAnswers(2000)), "small")
	if err != nil {
		t.Fatal(err)
	}
	big, err := script.Parse([]byte(readsThenAnswers(100_000)), "big")
	if err != nil {
		t.Fatal(err)
	}
	turn.Models = models{"script:small": script.New("script:small", small), "script:big": script.New("script:big", big)}
	turn.Prompt = strings.Repeat("a large task ", 2000)
	res := runTurn(context.Background(), turn, &events{})
	if res.Status != engine.StatusAnswered {
		t.Fatalf("Run = %s (%v), want answered by the larger model", res.Status, res.Err)
	}
	if st := stageStatus(t, turn, "001-answer@1"); st.Model != "script:big" {
		t.Errorf("answered by %s, want script:big", st.Model)
	}
}

// A tool result cut to fit the window (compact.go) that carries private
// content is not kept in the record: its note says so, and no cut file
// holds it.
func TestCompaction_keepsNoPrivate(t *testing.T) {
	var model strings.Builder
	model.WriteString("context_window = 4000\n")
	for _, p := range []string{"big.pem", "f2.txt", "f3.txt", "f4.txt", "f5.txt"} {
		fmt.Fprintf(&model, "[[turn]]\n[[turn.tool_calls]]\nname = \"read_file\"\narguments = { path = %q }\n", p)
	}
	model.WriteString("[[turn]]\n[[turn.tool_calls]]\nname = \"submit_output\"\narguments = { content = \"read them all\" }\n")
	f := newTaintFixture(t, "[agent.taint]\npolicy = \"ask\"\nprivate = [\"**/*.pem\"]", model.String(), nil)
	work := f.turn.Workspace.Cwd()
	pem := strings.Repeat(secretLine+"\n", 100)
	os.WriteFile(filepath.Join(work, "big.pem"), []byte(pem), 0o600)
	for i := 2; i <= 5; i++ {
		os.WriteFile(filepath.Join(work, fmt.Sprintf("f%d.txt", i)), []byte(strings.Repeat("an ordinary line of text\n", 120)), 0o600)
	}
	res := f.run(t)
	if res.Status != engine.StatusAnswered {
		t.Fatalf("Run = %s, want answered; warnings %q", res.Status, res.Warnings)
	}
	resp, _ := os.ReadFile(recordPath(f.turn, "stages/001-answer@1/response.md"))
	if !strings.Contains(string(resp), "Compaction: ") {
		t.Fatalf("no compaction in response.md")
	}
	kept := 0
	filepath.WalkDir(recordPath(f.turn, "stages/001-answer@1/cut"), func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			kept++
			// Not even masked: the private result is not kept at all.
			if b, _ := os.ReadFile(path); strings.Contains(string(b), "API_KEY") {
				t.Errorf("the cut file %s keeps the private file's result", path)
			}
		}
		return nil
	})
	if kept == 0 {
		t.Error("no cut result was kept: the ordinary ones should be")
	}
}

// submit_output's and transition's results are never cut, however large
// and however old: the model needs them to repair. Here the two oldest
// tool results of the visit are a refused submission (its reasons over a
// KiB) and a refused transition (naming a long target back); the file
// reads after them outgrow the window, and only those are cut.
func TestCompaction_keepsSubmitAndTransition(t *testing.T) {
	var names, props, answer []string
	for i := range 20 {
		name := fmt.Sprintf("a_property_with_a_long_name_that_the_schema_requires_%02d", i)
		names = append(names, fmt.Sprintf("%q", name))
		props = append(props, fmt.Sprintf("%s = { type = \"string\" }", name))
		answer = append(answer, fmt.Sprintf("%s = \"x\"", name))
	}
	agent := readingAgent + "allow_complete = true\n[stages.answer.output]\nformat = \"json\"\nschema = { type = \"object\", required = [" +
		strings.Join(names, ", ") + "], properties = { " + strings.Join(props, ", ") + " } }\n"
	model := "context_window = 9000\n" +
		"[[turn]]\n[[turn.tool_calls]]\nname = \"transition\"\narguments = { to = \"" + strings.Repeat("elsewhere", 150) + "\", reason = \"try\" }\n" +
		"[[turn]]\n[[turn.tool_calls]]\nname = \"submit_output\"\narguments = { content = {} }\n"
	for _, f := range fileNames(6) {
		model += fmt.Sprintf("[[turn]]\n[[turn.tool_calls]]\nname = \"read_file\"\narguments = { path = %q }\n", f)
	}
	model += "[[turn]]\n[[turn.tool_calls]]\nname = \"submit_output\"\narguments = { content = { " + strings.Join(answer, ", ") + " } }\n"
	turn := newTurn(t, agent, model)
	writeNumbered(t, turn, 6, 6000)
	turn.Engine.Tools = tools.Builtin()
	rec := &recording{}
	turn.Models = models{"script:test": rec.wrap(turn.Models)}
	res := runTurn(context.Background(), turn, &events{})
	if res.Status != engine.StatusAnswered {
		t.Fatalf("Run = %s (%v), want answered; warnings %q", res.Status, res.Err, res.Warnings)
	}
	if st := stageStatus(t, turn, "001-answer@1"); len(st.Compactions) == 0 {
		t.Fatal("nothing was compacted: the test proves nothing")
	}
	var first map[string]string // the two results as the model first saw them
	for _, req := range rec.reqs {
		for _, m := range req.Messages {
			if m.Role != llm.RoleTool || m.ToolName == "read_file" {
				continue
			}
			if first == nil {
				first = map[string]string{}
			}
			if _, seen := first[m.ToolName]; !seen {
				if len(m.Text) < 1<<10 {
					t.Fatalf("%s's result is %d bytes: too small to be cut, the test proves nothing", m.ToolName, len(m.Text))
				}
				first[m.ToolName] = m.Text
			}
			if m.Text != first[m.ToolName] {
				t.Errorf("%s's result was changed in a later request: %q", m.ToolName, m.Text[:min(len(m.Text), 120)])
				first[m.ToolName] = m.Text // said once
			}
		}
	}
	if len(first) != 2 {
		t.Errorf("results seen %v, want submit_output's and transition's", first)
	}
}

// A model whose window is past what coda takes (here 2 × 10^17 tokens,
// where window × 85 overflowed) is fitted as one of llm.MaxWindow: its
// requests fit, and it answers.
func TestCompaction_hugeWindow(t *testing.T) {
	turn := newTurn(t, readingAgent, readsThenAnswers(200_000_000_000_000_000))
	turn.Engine.Tools = tools.Builtin()
	res := runTurn(context.Background(), turn, &events{})
	if res.Status != engine.StatusAnswered {
		t.Fatalf("Run = %s (%v), want answered", res.Status, res.Err)
	}
}
