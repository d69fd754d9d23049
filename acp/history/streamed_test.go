package history

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/coda-acp/coda/acp/acptest"
	"github.com/coda-acp/coda/internal/jsonrpc"
)

// What a turn streamed is kept in order, consecutive chunks of a message
// joined into one update, each kind and stage its own; past maxStreamed
// the text is cut at a character boundary and the cut noted once, in the
// kind and message it fell in; every kept update is a valid session/update.
func TestStreamedText(t *testing.T) {
	st := NewStreamed(testChunk)
	st.Add("agent_thought_chunk", "m-1", "look", "Is it ")
	st.Add("agent_thought_chunk", "m-1", "look", "safe?")
	st.Add("agent_message_chunk", "m-2", "look", "Looking.")
	st.Add("agent_thought_chunk", "m-3", "answer", "Answering.")
	got := partsOf(t, st.Updates(unmasked))
	want := []string{"agent_thought_chunk m-1 look: Is it safe?", "agent_message_chunk m-2 look: Looking.", "agent_thought_chunk m-3 answer: Answering."}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("kept:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// A turn that streams 200 KiB: a chunk of "é" at a time, then more.
	long := NewStreamed(testChunk)
	chunk := strings.Repeat("é", 500)
	streamed := 0
	for streamed < 200<<10 {
		long.Add("agent_message_chunk", "m-9", "answer", chunk)
		streamed += len(chunk)
	}
	long.Add("agent_message_chunk", "m-10", "answer", "left out too")
	updates := long.Updates(unmasked)
	size := 0
	for _, u := range updates {
		size += len(u)
	}
	if size > maxStreamed+1024 {
		t.Errorf("kept %d bytes of updates, want about %d at most", size, maxStreamed)
	}
	parts := partsOf(t, updates)
	if len(parts) != 2 {
		t.Fatalf("kept %d updates, want the text and the note", len(parts))
	}
	kept := strings.TrimPrefix(parts[0], "agent_message_chunk m-9 answer: ")
	if !utf8.ValidString(kept) || !strings.HasPrefix(strings.Repeat("é", streamed/2), kept) || len(kept) < maxStreamed-1024 {
		t.Errorf("kept %d bytes of text, not a whole prefix near %d", len(kept), maxStreamed)
	}
	if note := parts[1]; !strings.HasPrefix(note, "agent_message_chunk m-9 answer: \n[… ") || !strings.HasSuffix(note, " more of what this turn streamed is not kept in the session]") {
		t.Errorf("the cut's note: %q", note)
	}

	// Thoughts past the bound leave a chat agent's reply, streamed after
	// them and kept nowhere else, in the replay.
	reasoned := NewStreamed(testChunk)
	for i := 0; i < 100; i++ {
		reasoned.Add("agent_thought_chunk", "m-1", "do", strings.Repeat("a", 1<<10))
	}
	reasoned.Add("agent_message_chunk", "m-2", "do", "Here is my reply.")
	got = partsOf(t, reasoned.Updates(unmasked))
	if len(got) != 3 || got[1] != "agent_message_chunk m-2 do: Here is my reply." || !strings.HasPrefix(got[2], "agent_thought_chunk m-1 do: \n[… ") {
		t.Errorf("after 100 KiB of thoughts, kept %d updates: %.80q", len(got), got)
	}

	if st := (*Streamed)(nil); st.Updates(unmasked) != nil {
		t.Error("a sink that keeps nothing has updates")
	}
}

// partsOf reads kept updates as "KIND MESSAGE STAGE: TEXT", each checked
// against the schema as a session/update.
func partsOf(t *testing.T, updates []json.RawMessage) []string {
	t.Helper()
	var out []string
	for _, u := range updates {
		line := append([]byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s-1","update":`), u...)
		line = append(line, "}}"...)
		if err := acptest.Check(line, ""); err != nil {
			t.Errorf("%v: %s", err, line)
		}
		var c struct {
			Kind    string `json:"sessionUpdate"`
			ID      string `json:"messageId"`
			Content struct{ Text string }
			Meta    struct{ Coda struct{ Phase, Stage string } } `json:"_meta"`
		}
		if err := json.Unmarshal(u, &c); err != nil {
			t.Fatal(err)
		}
		if c.Meta.Coda.Phase != "commentary" {
			t.Errorf("phase %q, want commentary", c.Meta.Coda.Phase)
		}
		out = append(out, c.Kind+" "+c.ID+" "+c.Meta.Coda.Stage+": "+c.Content.Text)
	}
	return out
}

// unmasked is a mask that masks nothing.
func unmasked(s string) string { return s }

// testChunk encodes a text chunk as acp's update sink does.
func testChunk(b []byte, kind, messageID, text, stage string) []byte {
	b = append(b, `{"sessionUpdate":"`...)
	b = append(b, kind...)
	b = append(b, `","messageId":`...)
	b = jsonrpc.AppendString(b, messageID)
	b = append(b, `,"content":{"type":"text","text":`...)
	b = jsonrpc.AppendString(b, text)
	b = append(b, `},"_meta":{"coda":{"phase":"commentary","stage":`...)
	b = jsonrpc.AppendString(b, stage)
	return append(b, "}}}"...)
}
