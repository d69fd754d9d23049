package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/tools"
)

// twoTurns is a session of two turns of readingAgent: the first reads
// f1.txt, then answers; the second answers.
const twoTurns = `
[[turn]]
thinking = "Read it first."
[[turn.tool_calls]]
name = "read_file"
arguments = { path = "f1.txt" }
[[turn]]
text = "It says the same thing <twice> & more."
[[turn.tool_calls]]
name = "submit_output"
raw_arguments = '{"content": "f1 says <this> & that."}'
[[turn]]
expect = "And now?"
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "Still that." }
`

// The next turn's first request starts with the previous turn's last:
// the same system prompt, the same tools, and every message as it was
// sent (the tool call and its framed result, the model's text and
// thinking, the arguments byte for byte), then the answer's call and its
// result, then the new prompt; through the session's file as the engine
// encodes it.
func TestTranscript_nextTurnStartsWithLast(t *testing.T) {
	turn := newTurn(t, readingAgent, twoTurns)
	writeNumbered(t, turn, 1, 2000)
	turn.Engine.Tools = tools.Builtin()
	rec := &recording{}
	turn.Models = models{"script:test": rec.wrap(turn.Models)}
	res := runTurn(context.Background(), turn, &events{})
	if res.Status != engine.StatusAnswered {
		t.Fatalf("turn 1 = %s (%v)", res.Status, res.Err)
	}
	ex := res.Exchange(turn.Turn)
	if len(ex.Transcript) == 0 || ex.Prompt != "Go." || ex.Answer != "f1 says <this> & that." {
		t.Fatalf("the exchange kept %+v", ex)
	}
	ex.Transcript = engine.DecodeTranscript(engine.EncodeTranscript(ex.Transcript))
	turn.History, turn.RunID, turn.Prompt = []engine.Exchange{ex}, "run-2", "And now?"
	if res := runTurn(context.Background(), turn, &events{}); res.Status != engine.StatusAnswered {
		t.Fatalf("turn 2 = %s (%v)", res.Status, res.Err)
	}
	if len(rec.reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(rec.reqs))
	}
	last, next := rec.reqs[1], rec.reqs[2]
	if last.System != next.System || !cmp.Equal(last.Tools, next.Tools) {
		t.Errorf("the system prompt or the tools changed between turns")
	}
	if len(next.Messages) != len(last.Messages)+3 {
		t.Fatalf("turn 2's first request has %d messages, want %d", len(next.Messages), len(last.Messages)+3)
	}
	if d := cmp.Diff(last.Messages, next.Messages[:len(last.Messages)]); d != "" {
		t.Errorf("turn 2's first request does not start with turn 1's last (-last +next):\n%s", d)
	}
	rest := next.Messages[len(last.Messages):]
	if rest[0].Role != llm.RoleAssistant || len(rest[0].ToolCalls) != 1 || string(rest[0].ToolCalls[0].Arguments) != `{"content":"f1 says <this> & that."}` ||
		rest[1].Role != llm.RoleTool || rest[2].Role != llm.RoleUser || rest[2].Text != "And now?" {
		t.Errorf("after turn 1's last request: %+v", rest)
	}
	// prompt.md names the earlier run rather than writing its turn out.
	prompt, _ := os.ReadFile(recordPath(turn, "stages/001-answer@1/prompt.md"))
	if !strings.Contains(string(prompt), "[earlier turn 1: run run-1]") || strings.Contains(string(prompt), "this is line of file 1") {
		t.Errorf("prompt.md of turn 2:\n%s", prompt)
	}
}

// A session file from before keeps no transcripts: its turns are shown as
// they were, framed before the task; beside turns that have one, each is
// a user message of its own, in order.
func TestTranscript_oldExchanges(t *testing.T) {
	old := engine.Exchange{Prompt: "Old question?", Answer: "Old answer.", RunID: "r-0"}
	kept := engine.Exchange{Prompt: "New question?", Answer: "New answer.", RunID: "r-1", Transcript: []llm.Message{
		{Role: llm.RoleUser, Text: "New question?"}, {Role: llm.RoleAssistant, Text: "New answer."}}}
	for _, tc := range []struct {
		name    string
		history []engine.Exchange
		want    []string // each message's text starts so
	}{
		{"old only", []engine.Exchange{old}, []string{"## This session's earlier turns\n\n<coda-data source=\"turn 1: the user's prompt\">\nOld question?"}},
		{"old then kept", []engine.Exchange{old, kept}, []string{"[Earlier turn 1 of this session]\n<coda-data source=\"turn 1: the user's prompt\">\nOld question?", "New question?", "New answer.", "Go."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			turn := newTurn(t, readingAgent, "[[turn]]\ntext = \"Fine.\"\n")
			turn.History = tc.history
			rec := &recording{}
			turn.Models = models{"script:test": rec.wrap(turn.Models)}
			runTurn(context.Background(), turn, &events{})
			msgs := rec.reqs[0].Messages
			if len(msgs) != len(tc.want) {
				t.Fatalf("%d messages, want %d: %+v", len(msgs), len(tc.want), msgs)
			}
			for i, want := range tc.want {
				if !strings.HasPrefix(msgs[i].Text, want) {
					t.Errorf("message %d is %q, want it to start %q", i, msgs[i].Text, want)
				}
			}
			if !strings.HasSuffix(msgs[len(msgs)-1].Text, "Go.") {
				t.Errorf("the last message is not the prompt: %q", msgs[len(msgs)-1].Text)
			}
		})
	}
}

// Earlier turns kept as transcripts that outgrow the window are cut
// whole, oldest first: a note says how many are not shown, the compaction
// line names them, and the turns kept are as they were sent.
func TestTranscript_compaction(t *testing.T) {
	turn := newTurn(t, readingAgent, readsThenAnswers(9000))
	turn.Engine.Tools = tools.Builtin()
	for i := 1; i <= 6; i++ {
		q := fmt.Sprintf("question %d: %s", i, strings.Repeat("words ", 600))
		turn.History = append(turn.History, engine.Exchange{Prompt: q, Answer: fmt.Sprintf("answer %d", i), RunID: fmt.Sprintf("r-%d", i), Transcript: []llm.Message{
			{Role: llm.RoleUser, Text: q},
			{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: fmt.Sprintf("c%d", i), Name: "read_file", Arguments: json.RawMessage(`{"path": "x"}`)}}},
			{Role: llm.RoleTool, ToolCallID: fmt.Sprintf("c%d", i), ToolName: "read_file", Text: engine.Frame("result of read_file", "nothing")},
			{Role: llm.RoleAssistant, Text: fmt.Sprintf("answer %d", i)},
		}})
	}
	rec := &recording{}
	turn.Models = models{"script:test": rec.wrap(turn.Models)}
	res := runTurn(context.Background(), turn, &events{})
	if res.Status != engine.StatusAnswered {
		t.Fatalf("Run = %s (%v), want answered", res.Status, res.Err)
	}
	msgs := rec.reqs[0].Messages
	if !strings.HasPrefix(msgs[0].Text, "[") || !strings.Contains(msgs[0].Text, "earlier exchanges of this session are not shown; the first was:") || !strings.Contains(msgs[0].Text, "question 1: words") {
		t.Errorf("the first message, after the cut: %q", msgs[0].Text[:min(len(msgs[0].Text), 300)])
	}
	var prompts []string
	for _, m := range msgs[1:] {
		if m.Role == llm.RoleUser {
			prompts = append(prompts, m.Text[:min(len(m.Text), 11)])
		}
	}
	if len(prompts) < 2 || prompts[len(prompts)-1] != "Go." || prompts[len(prompts)-2] != "question 6:" || contains(prompts, "question 1:") {
		t.Errorf("the user messages after the cut: %q", prompts)
	}
	if (len(msgs)-2)%4 != 0 {
		t.Errorf("%d messages: the turns kept are not whole", len(msgs))
	}
	st := stageStatus(t, turn, "001-answer@1")
	if len(st.Compactions) != 1 || !strings.Contains(st.Compactions[0], "earlier turns of the session (runs r-1") || st.HistoryNotShown != 0 {
		t.Errorf("compactions %q", st.Compactions)
	}
	prompt, _ := os.ReadFile(recordPath(turn, "stages/001-answer@1/prompt.md"))
	if strings.Contains(string(prompt), "run r-1]") || !strings.Contains(string(prompt), "run r-6]") {
		t.Errorf("prompt.md names the cut turns, or not the kept ones:\n%s", prompt)
	}
}

// A transcript that ends in a call without its result (a run that failed
// while its tools ran) is kept without that call: no API takes it.
func TestTranscript_unansweredCut(t *testing.T) {
	call := func(id string) llm.Message {
		return llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: id, Name: "read_file"}}}
	}
	msgs := []llm.Message{{Role: llm.RoleUser, Text: "Go."}, call("a"), {Role: llm.RoleTool, ToolCallID: "a"}, call("b")}
	if got := engine.Answered(msgs); len(got) != 3 {
		t.Errorf("kept %d messages, want 3", len(got))
	}
	if got := engine.Answered(msgs[:3]); len(got) != 3 {
		t.Errorf("an answered transcript lost %d messages", 3-len(got))
	}
}

// A session's file gives back every byte of the arguments and replays it
// kept: encoding/json would compact and escape raw JSON.
func TestTranscript_encodeKeepsBytes(t *testing.T) {
	msgs := []llm.Message{
		{Role: llm.RoleUser, Text: "a <b> & c"},
		{Role: llm.RoleAssistant, Thinking: "hm", Replay: json.RawMessage(`[{"type": "thinking", "signature": "x<y"}]`),
			ToolCalls: []llm.ToolCall{{ID: "c1", Name: "grep", Arguments: json.RawMessage(`{"pattern": "a <b>",  "path": "."}`)}}},
		{Role: llm.RoleTool, ToolCallID: "c1", ToolName: "grep", Text: "none", IsError: true},
	}
	if d := cmp.Diff(msgs, engine.DecodeTranscript(engine.EncodeTranscript(msgs))); d != "" {
		t.Errorf("round trip (-sent +kept):\n%s", d)
	}
	if got := engine.DecodeTranscript(json.RawMessage(`[{"role":"system","text":"obey"}]`)); got != nil {
		t.Errorf("a transcript with a system message was read: %+v", got)
	}
}

// Once compaction has cut earlier turns, the session forgets them
// (Result.HistoryCut, ForgetHistory): the next turn is sent the same note
// and the turns after it, so its first request starts with the cut turn's
// last request instead of being cut again somewhere else.
func TestTranscript_forgetsWhatWasCut(t *testing.T) {
	turn := newTurn(t, readingAgent, `
context_window = 4000
[[turn]]
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "First." }
[[turn]]
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "Second." }
`)
	var history []engine.Exchange
	for i := 1; i <= 4; i++ {
		q := fmt.Sprintf("question %d: %s", i, strings.Repeat("words ", 330))
		history = append(history, engine.Exchange{Prompt: q, Answer: "ok", RunID: fmt.Sprintf("r-%d", i), Transcript: []llm.Message{
			{Role: llm.RoleUser, Text: q}, {Role: llm.RoleAssistant, Text: "ok"}}})
	}
	turn.History = history
	rec := &recording{}
	turn.Models = models{"script:test": rec.wrap(turn.Models)}
	res := runTurn(context.Background(), turn, &events{})
	if res.Status != engine.StatusAnswered || res.HistoryCut == 0 || res.HistoryCut == 4 {
		t.Fatalf("turn = %s (%v), cut %d earlier turns; want some cut, not all", res.Status, res.Err, res.HistoryCut)
	}
	turn.History = engine.KeepHistory(engine.ForgetHistory(history, res.HistoryCut, res.Exchange(turn.Turn)))
	if n := turn.History[0].NotShown; n != res.HistoryCut {
		t.Errorf("the first turn kept counts %d not shown, want %d", n, res.HistoryCut)
	}
	turn.RunID, turn.Prompt = "run-2", "Next."
	if res := runTurn(context.Background(), turn, &events{}); res.Status != engine.StatusAnswered || res.HistoryCut != 0 {
		t.Fatalf("the next turn = %s (%v), cut %d", res.Status, res.Err, res.HistoryCut)
	}
	last, next := rec.reqs[0], rec.reqs[1]
	if len(next.Messages) <= len(last.Messages) {
		t.Fatalf("the next turn's request has %d messages, the last %d", len(next.Messages), len(last.Messages))
	}
	if d := cmp.Diff(last.Messages, next.Messages[:len(last.Messages)]); d != "" || last.System != next.System {
		t.Errorf("the next turn's first request does not start with the last one (-last +next):\n%s", d)
	}
	// Everything cut at once: the count goes on with the turn itself.
	all := engine.ForgetHistory(history[:2], 2, engine.Exchange{Prompt: "now"})
	if len(all) != 1 || all[0].NotShown != 2 || !strings.HasPrefix(all[0].FirstNotShown, "question 1: words") {
		t.Errorf("ForgetHistory of all = %+v", all)
	}
}

// A transcript over the bound a session keeps (a file written elsewhere)
// is read as none: the exchange is shown by its prompt and answer.
func TestTranscript_decodeBounded(t *testing.T) {
	big := []llm.Message{{Role: llm.RoleTool, ToolCallID: "c", Text: strings.Repeat("x", 1<<20+1)}}
	if got := engine.DecodeTranscript(engine.EncodeTranscript(big)); got != nil {
		t.Errorf("a transcript of %d bytes was read", len(big[0].Text))
	}
}
