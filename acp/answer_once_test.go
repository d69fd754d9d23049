package acp_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/coda-acp/coda/acp"
	"github.com/coda-acp/coda/engine/blueprint"
	"github.com/coda-acp/coda/outputspec"
)

// answerOnceModel is the script of TestAnswerOnce, one block a prompt.
const answerOnceModel = `
# 1: reasoning and commentary, then the answer submitted.
[[turn]]
thinking = "Is it safe? "
text = ["Checking ", "the module."]
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = '{"safe": true}' }

# 2: a reply taken as the answer (no tool called).
[[turn]]
text = ['{"safe": ', 'false}']

# 3: a repair: commentary and a fenced answer, refused; told why, more
# commentary and the answer alone.
[[turn]]
text = "Let me look at the files."
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = """` + "```json\n{\"safe\": 1}\n```" + `""" }

[[turn]]
expect = "code fence"
text = "Fixing the format."
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = '{"safe": 1}' }

# 4: a reply refused (not JSON), then a reply accepted.
[[turn]]
text = "The module is safe."

[[turn]]
text = '{"safe": 2}'

# 5, in the session that asks for its commentary as messages.
[[turn]]
text = "Checking again."
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = '{"safe": 3}' }

# 6, in that session loaded again: it still asks for messages.
[[turn]]
text = "Once more."
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = '{"safe": 4}' }
`

// TestAnswerOnce holds DESIGN §8's streaming rule as a client that joins
// message text sees it (acpx --format quiet, the SDK's examples): for an
// agent that answers, the joined agent_message_chunk text of a turn is
// exactly its answer — with commentary, with a reply taken as the answer,
// with a repair, with a refused reply — and the thoughts carry the work; a
// session/load replays each turn as it streamed: its thoughts the work, its
// message the answer, once. A session that asks for _meta.coda.commentary
// "message" gets its commentary as messages, as coda streamed it before,
// and so does its replay.
func TestAnswerOnce(t *testing.T) {
	m := serveLive(t, answerOnceModel, acp.Options{Launch: outputspec.Spec{Format: "json"}})
	m.request(1, "session/new", newSession())
	wants := []struct{ answer, work string }{
		{`{"safe": true}`, "Is it safe? Checking the module."},
		{`{"safe": false}`, `{"safe": false}`},
		{`{"safe": 1}`, "Let me look at the files.Fixing the format."},
		{`{"safe": 2}`, `The module is safe.{"safe": 2}`},
	}
	for i, want := range wants {
		id := 10 + i
		from := len(m.allLines())
		resp := m.request(id, "session/prompt", map[string]any{"sessionId": "s-1", "prompt": []any{map[string]any{"type": "text", "text": fmt.Sprint("Turn ", i+1)}}})
		var r struct {
			Result struct {
				Meta struct {
					Coda struct {
						FinalOutput *struct{ Content string } `json:"finalOutput"`
					} `json:"coda"`
				} `json:"_meta"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(resp), &r); err != nil || r.Result.Meta.Coda.FinalOutput == nil {
			t.Fatalf("prompt %d: no answer: %s", i+1, resp)
		}
		if got := r.Result.Meta.Coda.FinalOutput.Content; got != want.answer {
			t.Errorf("prompt %d: finalOutput.content %q, want %q", i+1, got, want.answer)
		}
		messages, thoughts := joined(t, m.allLines()[from:], "s-1")
		if messages != want.answer {
			t.Errorf("prompt %d: the joined message text is %q, want exactly the answer %q", i+1, messages, want.answer)
		}
		if thoughts != want.work {
			t.Errorf("prompt %d: the joined thought text is %q, want the work %q", i+1, thoughts, want.work)
		}
	}

	// The load replays the turns as they streamed: each one's thoughts are
	// its work, its message its answer, once.
	from := len(m.allLines())
	resp := m.request(20, "session/load", map[string]any{"sessionId": "s-1", "cwd": m.work, "mcpServers": []any{}})
	if !strings.Contains(resp, `"result"`) {
		t.Fatalf("session/load: %s", resp)
	}
	replayed := replayedTurns(t, m.allLines()[from:], "s-1")
	if len(replayed) != len(wants) {
		t.Fatalf("session/load replayed %d turns, want %d: %q", len(replayed), len(wants), replayed)
	}
	for i, want := range wants {
		if got := replayed[i]; got.messages != want.answer || got.thoughts != want.work {
			t.Errorf("session/load, turn %d: messages %q, thoughts %q; want the answer %q alone, and the work %q", i+1, got.messages, got.thoughts, want.answer, want.work)
		}
	}

	// Commentary as messages, when the session asks.
	m.request(30, "session/new", map[string]any{"cwd": m.work, "mcpServers": []any{}, "_meta": map[string]any{"coda": map[string]any{"commentary": "message"}}})
	from = len(m.allLines())
	m.request(31, "session/prompt", map[string]any{"sessionId": "s-2", "prompt": []any{map[string]any{"type": "text", "text": "Again"}}})
	messages, thoughts := joined(t, m.allLines()[from:], "s-2")
	if messages != `Checking again.{"safe": 3}` || thoughts != "" {
		t.Errorf("commentary message: messages %q, thoughts %q; want the commentary then the answer as messages", messages, thoughts)
	}
	from = len(m.allLines())
	m.request(33, "session/load", map[string]any{"sessionId": "s-2", "cwd": m.work, "mcpServers": []any{}})
	if got := replayedTurns(t, m.allLines()[from:], "s-2"); len(got) != 1 || got[0].messages != `Checking again.{"safe": 3}` || got[0].thoughts != "" {
		t.Errorf("commentary message, replayed: %q; want the commentary then the answer as messages", got)
	}
	from = len(m.allLines())
	m.request(34, "session/prompt", map[string]any{"sessionId": "s-2", "prompt": []any{map[string]any{"type": "text", "text": "Once more"}}})
	if messages, _ := joined(t, m.allLines()[from:], "s-2"); messages != `Once more.{"safe": 4}` {
		t.Errorf("the loaded session's commentary: messages %q, want the commentary as a message still", messages)
	}
	if resp := m.request(32, "session/new", map[string]any{"cwd": m.work, "mcpServers": []any{}, "_meta": map[string]any{"coda": map[string]any{"commentary": "loud"}}}); !strings.Contains(resp, `"code":-32602`) || !strings.Contains(resp, "_meta.coda.commentary") {
		t.Errorf("an unknown commentary: %s, want -32602 naming _meta.coda.commentary", resp)
	}
}

// An agent that answers nothing streams as a chat agent does: its
// reasoning as thoughts, its reply as a message, then the no_answer line
// as a thought, never in the message text (DESIGN §22); session/load
// replays the turn as it streamed, the reply included.
func TestAnswerOnce_chatAgent(t *testing.T) {
	agent, err := blueprint.Parse([]byte("[agent]\nname = \"chat\"\n[stages.do]\nsystem_prompt = \"Chat.\"\n"), "chat.toml")
	if err != nil {
		t.Fatal(err)
	}
	m := serveLive(t, "[[turn]]\nthinking = \"A greeting.\"\ntext = [\"Here is \", \"my chat reply.\"]\n", acp.Options{Agent: agent})
	m.request(1, "session/new", newSession())
	from := len(m.allLines())
	m.request(2, "session/prompt", map[string]any{"sessionId": "s-1", "prompt": []any{map[string]any{"type": "text", "text": "Hello"}}})
	live := replayedTurns(t, append([]string{userChunk("s-1")}, m.allLines()[from:]...), "s-1")
	if len(live) != 1 || live[0].messages != "Here is my chat reply." || !strings.HasPrefix(live[0].thoughts, "A greeting.No answer") {
		t.Fatalf("live: %q; want the reasoning then the no_answer line as thoughts, the reply alone as the message", live)
	}
	from = len(m.allLines())
	m.request(3, "session/load", map[string]any{"sessionId": "s-1", "cwd": m.work, "mcpServers": []any{}})
	if replayed := replayedTurns(t, m.allLines()[from:], "s-1"); len(replayed) != 1 || replayed[0] != live[0] {
		t.Errorf("session/load replayed %q, want the turn as it streamed, %q", replayed, live)
	}
}

// A replayedTurn is a turn's text as a client joins it.
type replayedTurn struct{ messages, thoughts string }

// replayedTurns are the turns among lines, each begun by its prompt's
// user_message_chunk.
func replayedTurns(t *testing.T, lines []string, id string) []replayedTurn {
	var turns []replayedTurn
	var group []string
	flush := func() {
		if group != nil {
			msg, thought := joined(t, group, id)
			turns = append(turns, replayedTurn{msg, thought})
		}
	}
	for _, l := range lines {
		if u := updateOf(t, l, id); u != nil && u.SessionUpdate == "user_message_chunk" {
			flush()
			group = []string{}
			continue
		}
		if group != nil {
			group = append(group, l)
		}
	}
	flush()
	return turns
}

// userChunk is a user_message_chunk line, where a live turn's lines start.
func userChunk(id string) string {
	return `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"` + id + `","update":{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"-"}}}}`
}

// allLines is every line coda has sent so far.
func (m *liveConn) allLines() []string {
	lines, _ := m.lines()
	return lines
}

type sentUpdate struct {
	SessionUpdate string `json:"sessionUpdate"`
	Content       struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
}

// updateOf is line's session/update for session id, or nil; Content is
// read for the chunks only.
func updateOf(t *testing.T, line, id string) *sentUpdate {
	var m struct {
		Method string `json:"method"`
		Params struct {
			SessionID string `json:"sessionId"`
			Update    struct {
				SessionUpdate string          `json:"sessionUpdate"`
				Content       json.RawMessage `json:"content"`
			} `json:"update"`
		} `json:"params"`
	}
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatalf("coda sent a line that is not JSON: %s", line)
	}
	if m.Method != "session/update" || m.Params.SessionID != id {
		return nil
	}
	u := &sentUpdate{SessionUpdate: m.Params.Update.SessionUpdate}
	if strings.HasSuffix(u.SessionUpdate, "_chunk") {
		if err := json.Unmarshal(m.Params.Update.Content, &u.Content); err != nil {
			t.Fatalf("a chunk's content: %v: %s", err, line)
		}
	}
	return u
}

// joined is the text of the agent_message_chunks and of the
// agent_thought_chunks among lines, each joined as a client joins them.
func joined(t *testing.T, lines []string, id string) (messages, thoughts string) {
	var msg, thought strings.Builder
	for _, l := range lines {
		u := updateOf(t, l, id)
		if u == nil || u.Content.Type != "text" {
			continue
		}
		switch u.SessionUpdate {
		case "agent_message_chunk":
			msg.WriteString(u.Content.Text)
		case "agent_thought_chunk":
			thought.WriteString(u.Content.Text)
		}
	}
	return msg.String(), thought.String()
}
