package history

import (
	"bytes"
	"encoding/json"

	"github.com/coda-acp/coda/internal/plainjson"

	"github.com/coda-acp/coda/internal/bytesize"
	"github.com/coda-acp/coda/internal/textcut"
)

// What a turn streamed as text, kept for session/load (DESIGN §8: a load
// replays a turn as it streamed). The text chunks — commentary, thoughts,
// a chat agent's reply — are kept with their kind (agent_thought_chunk or
// agent_message_chunk), message id and stage, and replayed between the
// prompt and the closing chunks as the same updates. Consecutive chunks of
// one message are joined into one update: a client joins them anyway, and
// a turn of many small deltas does not cost the file a header per delta.
//
// Tool calls, plans and usage are not kept: a tool call's arguments,
// output and diffs can be as large as the files it touched, the run's
// record keeps them whole (run:PATH), and a replayed tool call would show
// a permission's outcome the client never asked about. The replay is the
// conversation: what was said, the work as thoughts, and the answer.

// maxStreamed bounds what an exchange keeps of its turn's streamed text of
// each kind, thoughts and messages apart, in bytes of text and each kept
// update's fields: a long turn's record of the session stays small. The
// rest of a kind is cut, and the cut noted where it falls. The kinds have
// a bound each so that a long reasoning never pushes out what was said as
// messages: a chat agent's reply is kept nowhere else.
const maxStreamed = 64 << 10

// streamedOverhead is what each kept update costs besides its text and
// ids: its JSON around them.
const streamedOverhead = 128

// Streamed is a turn's streamed text, as kept so far.
type Streamed struct {
	chunk              Chunk
	parts              []streamedPart
	thoughts, messages streamedBudget
}

// A Chunk appends a text chunk's update object, as the turn streamed it
// (acp's update sink encodes it so).
type Chunk func(b []byte, kind, messageID, text, stage string) []byte

// NewStreamed keeps what a turn streams, replayed as chunk encodes it.
func NewStreamed(chunk Chunk) *Streamed { return &Streamed{chunk: chunk} }

// A streamedBudget is what one kind of text costs against maxStreamed.
type streamedBudget struct {
	size int // what the kind's parts cost
	// cut is the part the kind's first text left out belonged to (its
	// text empty): the note of the cut goes there, with its kind and
	// message.
	cut  *streamedPart
	left int // bytes of text left out
}

// budget is the bound kind's text counts against.
func (st *Streamed) budget(kind string) *streamedBudget {
	if kind == "agent_message_chunk" {
		return &st.messages
	}
	return &st.thoughts
}

// A streamedPart is one update kept: the text of consecutive chunks of one
// kind, message and stage.
type streamedPart struct {
	kind, messageID, stage string
	text                   []byte
}

// Add keeps a chunk sent as kind, within its kind's maxStreamed.
func (st *Streamed) Add(kind, messageID, stage, text string) {
	b := st.budget(kind)
	if b.cut != nil {
		b.left += len(text)
		return
	}
	n := len(st.parts)
	joins := n > 0 && st.parts[n-1].kind == kind && st.parts[n-1].messageID == messageID && st.parts[n-1].stage == stage
	cost := len(text)
	if !joins {
		cost += streamedOverhead + len(kind) + len(messageID) + len(stage)
	}
	if b.size+cost > maxStreamed {
		room := maxStreamed - b.size - (cost - len(text))
		kept := textcut.At(text, max(room, 0))
		b.left = len(text) - len(kept)
		b.cut = &streamedPart{kind: kind, messageID: messageID, stage: stage}
		text = kept
		if text == "" {
			return
		}
	}
	b.size += cost
	if joins {
		st.parts[n-1].text = append(st.parts[n-1].text, text...)
		return
	}
	st.parts = append(st.parts, streamedPart{kind: kind, messageID: messageID, stage: stage, text: []byte(text)})
}

// Updates are the update objects to keep, in order, their text masked
// (engine.Result.Mask: the session's file keeps no secret the turn
// streamed); the cuts, if any, are noted last, each in the kind and
// message it fell in.
func (st *Streamed) Updates(mask func(string) string) []json.RawMessage {
	if st == nil || len(st.parts) == 0 && st.thoughts.cut == nil && st.messages.cut == nil {
		return nil
	}
	out := make([]json.RawMessage, 0, len(st.parts)+2)
	for _, p := range st.parts {
		out = append(out, st.chunk(nil, p.kind, p.messageID, mask(string(p.text)), p.stage))
	}
	for _, b := range []*streamedBudget{&st.thoughts, &st.messages} {
		if c := b.cut; c != nil {
			note := "\n[… " + bytesize.Format(b.left) + " more of what this turn streamed is not kept in the session]"
			out = append(out, st.chunk(nil, c.kind, c.messageID, note, c.stage))
		}
	}
	return out
}

// MaskUpdates are the update objects of the turn's closing chunks as the
// session's file keeps them: each string in them masked (mask), so that
// an answer the gate let through is not kept with a secret in clear. One
// that masking leaves alone is kept byte for byte; one it changes is
// encoded again (its members then in alphabetical order).
func MaskUpdates(updates [][]byte, mask func(string) string) [][]byte {
	out := make([][]byte, len(updates))
	for i, u := range updates {
		out[i] = u
		dec := json.NewDecoder(bytes.NewReader(u))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) != nil {
			continue
		}
		changed := false
		v = maskStrings(v, mask, &changed)
		if !changed {
			continue
		}
		if b, err := plainjson.Marshal(v, ""); err == nil {
			out[i] = bytes.TrimSuffix(b, []byte("\n"))
		}
	}
	return out
}

// maskStrings is v, decoded JSON, with every string in it masked; changed
// is set when one was.
func maskStrings(v any, mask func(string) string, changed *bool) any {
	switch v := v.(type) {
	case string:
		m := mask(v)
		*changed = *changed || m != v
		return m
	case []any:
		for i := range v {
			v[i] = maskStrings(v[i], mask, changed)
		}
	case map[string]any:
		for k := range v {
			v[k] = maskStrings(v[k], mask, changed)
		}
	}
	return v
}
