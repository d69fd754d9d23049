package engine

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/coda-acp/coda/engine/llm"
)

// A session's transcript (DESIGN §6, §23: requests that cache). A turn's
// first visit keeps its conversation as it was sent: the user's prompt as
// the user's message, the model's messages with their tool calls, each
// tool result framed as it was first sent (frame.go), any nudge or
// steering; a run that went on to later stages ends it with the answer as
// the assistant's message. The session keeps it with the exchange
// (Exchange.Transcript), and the next turn's first visit is sent each
// earlier turn's transcript, in order, before its prompt: so its first
// request starts with the previous turn's last request, byte for byte,
// which is what the providers' prompt caches read. Only the prompt's
// images are not kept (their notes stand in, as HistoryPrompt has them).
//
// An exchange without a transcript (a session file from before, or a turn
// whose transcript was over maxTranscript) is shown as before: its prompt
// and answer framed as data (history.go), in a user message of its own,
// or, when no earlier turn has a transcript, before the task in the
// prompt's message, exactly as the release before sent it. Compaction
// cuts whole earlier turns, oldest first, and says so (compact.go).

// maxTranscript bounds what a session keeps of one turn's conversation, in
// the bytes requestBytes counts: a turn over it is kept as its prompt and
// answer only. The session keeps MaxHistory turns, so this bounds its
// memory too.
const maxTranscript = 1 << 20

// historyShown is where a visit's conversation holds the session's
// earlier turns as messages: a note of the turns not shown (note), then
// each exchange's messages (spans, one count an exchange); the visit's own
// start at n. Zero when the turns are shown as text before the task.
type historyShown struct {
	note  bool
	spans []int
	n     int
}

// hasTranscript says whether any of h's exchanges keeps its transcript.
func hasTranscript(h []Exchange) bool {
	for _, ex := range h {
		if len(ex.Transcript) > 0 {
			return true
		}
	}
	return false
}

// historyMessages are h, the earlier turns a run's first visit is shown,
// as messages: a note of what is not shown, then each exchange's
// transcript, or its prompt and answer framed where it has none.
func historyMessages(h []Exchange) ([]llm.Message, historyShown) {
	var msgs []llm.Message
	var shown historyShown
	if n := h[0].NotShown; n > 0 {
		msgs = append(msgs, llm.Message{Role: llm.RoleUser, Text: notShownText(n, h[0].FirstNotShown)})
		shown.note = true
	}
	for i, ex := range h {
		if len(ex.Transcript) > 0 {
			msgs = append(msgs, ex.Transcript...)
			shown.spans = append(shown.spans, len(ex.Transcript))
			continue
		}
		turn := h[0].NotShown + i + 1
		msgs = append(msgs, llm.Message{Role: llm.RoleUser, Text: exchangeText(turn, ex)})
		shown.spans = append(shown.spans, 1)
	}
	shown.n = len(msgs)
	return msgs, shown
}

// notShownText is the note that n earlier exchanges are not shown, the
// first of them having asked first.
func notShownText(n int, first string) string {
	exchanges := "exchanges of this session are"
	if n == 1 {
		exchanges = "exchange of this session is"
	}
	if first == "" {
		return fmt.Sprintf("[%d earlier %s not shown.]", n, exchanges)
	}
	return fmt.Sprintf("[%d earlier %s not shown; the first was:]\n%s", n, exchanges, Frame("turn 1: the user's prompt, its first line", first))
}

// exchangeText is an earlier turn without a transcript, framed.
func exchangeText(turn int, ex Exchange) string {
	return fmt.Sprintf("[Earlier turn %d of this session]\n%s\n%s", turn,
		Frame(fmt.Sprintf("turn %d: the user's prompt", turn), ex.Prompt), Frame(fmt.Sprintf("turn %d: the answer", turn), ex.Answer))
}

// keepTranscript keeps the conversation of the run's first visit v as the
// session's transcript of the turn: its own messages, after the earlier
// turns', its prompt without images, calls left unanswered cut off.
func (r *run) keepTranscript(v *stageVisit) {
	if len(r.done) != 0 || r.sub.depth != 0 {
		return
	}
	own := v.messages[min(v.hist.n, len(v.messages)):]
	if len(own) == 0 {
		return
	}
	kept := make([]llm.Message, 0, len(own)+1)
	kept = append(kept, own...)
	kept[0].Text, kept[0].Images = strings.TrimPrefix(kept[0].Text, v.rec.history), nil
	if len(r.t.Images) > 0 {
		kept[0].Text = r.t.HistoryPrompt()
	}
	r.transcript = answered(kept)
	r.transcriptOpen = len(r.transcript) < len(kept)
}

// answered is msgs without a last assistant message whose tool calls are
// not all answered (a run that failed while its tools ran): every API
// refuses a call without its result.
func answered(msgs []llm.Message) []llm.Message {
	open, from := map[string]bool{}, -1
	for i, m := range msgs {
		switch m.Role {
		case llm.RoleAssistant:
			if len(m.ToolCalls) > 0 {
				open, from = map[string]bool{}, i
				for _, tc := range m.ToolCalls {
					open[tc.ID] = true
				}
			}
		case llm.RoleTool:
			delete(open, m.ToolCallID)
		}
	}
	if len(open) > 0 {
		return msgs[:from]
	}
	return msgs
}

// Exchange is the finished turn t as the session keeps it for its later
// turns: the prompt as they read it, the answer (or the last reply), and
// the transcript of its first visit, each masked of what the turn read of
// private files (Mask). A run that went past its first visit, or whose
// transcript lost an unanswered call, ends the transcript with the answer
// as the assistant's message. A transcript over maxTranscript is not kept.
func (res *Result) Exchange(t *Turn) Exchange {
	ex := Exchange{Prompt: t.HistoryPrompt(), Answer: res.LastReply, RunID: res.RunID}
	if res.Answer != nil {
		ex.Answer = res.Answer.Content
	}
	masked := Exchange{Prompt: res.Mask(ex.Prompt), Answer: res.Mask(ex.Answer), RunID: ex.RunID}
	masked.Masked = masked.Prompt != ex.Prompt || masked.Answer != ex.Answer
	tr := res.transcript
	if len(tr) == 0 {
		return masked
	}
	if last := tr[len(tr)-1]; res.visits > 1 || res.transcriptOpen || last.Role == llm.RoleUser {
		if ex.Answer != "" {
			tr = append(tr[:len(tr):len(tr)], llm.Message{Role: llm.RoleAssistant, Text: ex.Answer})
		}
	}
	size := 0
	for i := range tr {
		size += messageBytes(&tr[i])
	}
	if size > maxTranscript {
		return masked
	}
	masked.Transcript = maskMessages(tr, res.Mask)
	return masked
}

// maskMessages is msgs masked by mask, copied only where it changes them;
// a message masked loses what its provider asked to have replayed, which
// may carry the same text in clear (or signed, so that masking it would
// be refused).
func maskMessages(msgs []llm.Message, mask func(string) string) []llm.Message {
	out := msgs
	copied := false
	for i, m := range msgs {
		c := m
		c.Text, c.Thinking = mask(m.Text), mask(m.Thinking)
		changed := c.Text != m.Text || c.Thinking != m.Thinking
		if len(m.ToolCalls) > 0 {
			calls := make([]llm.ToolCall, len(m.ToolCalls))
			for j, tc := range m.ToolCalls {
				calls[j] = tc
				if args := mask(string(tc.Arguments)); args != string(tc.Arguments) {
					changed = true
					calls[j].Arguments = json.RawMessage(args)
					if !json.Valid(calls[j].Arguments) {
						b, _ := json.Marshal(map[string]string{"masked": args})
						calls[j].Arguments = b
					}
				}
			}
			c.ToolCalls = calls
		}
		if len(m.Replay) > 0 && mask(string(m.Replay)) != string(m.Replay) {
			changed = true
		}
		if !changed {
			continue
		}
		c.Replay = nil
		if !copied {
			out, copied = append([]llm.Message(nil), msgs...), true
		}
		out[i] = c
	}
	return out
}

// A transcript's message as a session's file keeps it: the fields that
// are set, under short names.
type keptMessage struct {
	Role       llm.Role   `json:"role"`
	Text       string     `json:"text,omitempty"`
	Thinking   string     `json:"thinking,omitempty"`
	ToolCalls  []keptCall `json:"toolCalls,omitempty"`
	Replay     string     `json:"replay,omitempty"`
	ToolCallID string     `json:"toolCallId,omitempty"`
	ToolName   string     `json:"toolName,omitempty"`
	IsError    bool       `json:"isError,omitempty"`
}

// keptCall is a tool call; its arguments, as the replay, are kept as a
// string: encoding/json would compact and escape raw JSON, and the next
// request must send the bytes this one sent.
type keptCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// EncodeTranscript is a turn's transcript as a session's file keeps it;
// nil for none.
func EncodeTranscript(msgs []llm.Message) json.RawMessage {
	if len(msgs) == 0 {
		return nil
	}
	kept := make([]keptMessage, len(msgs))
	for i, m := range msgs {
		kept[i] = keptMessage{Role: m.Role, Text: m.Text, Thinking: m.Thinking, Replay: string(m.Replay), ToolCallID: m.ToolCallID, ToolName: m.ToolName, IsError: m.IsError}
		for _, tc := range m.ToolCalls {
			kept[i].ToolCalls = append(kept[i].ToolCalls, keptCall{ID: tc.ID, Name: tc.Name, Arguments: string(tc.Arguments)})
		}
	}
	// Plain, < > and & as they are: a session's line takes a byte a
	// character of code, not six (store/exchange.go).
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(kept) != nil {
		return nil
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// DecodeTranscript reads what EncodeTranscript wrote; a transcript that
// cannot be read, or is over maxTranscript (a file written elsewhere: a
// session holds MaxHistory of them), is none, and the exchange is shown
// by its prompt and answer.
func DecodeTranscript(raw json.RawMessage) []llm.Message {
	if len(raw) == 0 || len(raw) > 8*maxTranscript { // escapes make an encoding longer
		return nil
	}
	var kept []keptMessage
	if json.Unmarshal(raw, &kept) != nil {
		return nil
	}
	msgs := make([]llm.Message, len(kept))
	size := 0
	for i, k := range kept {
		switch k.Role {
		case llm.RoleUser, llm.RoleAssistant, llm.RoleTool:
		default:
			return nil
		}
		msgs[i] = llm.Message{Role: k.Role, Text: k.Text, Thinking: k.Thinking, ToolCallID: k.ToolCallID, ToolName: k.ToolName, IsError: k.IsError}
		if k.Replay != "" {
			msgs[i].Replay = json.RawMessage(k.Replay)
		}
		for _, c := range k.ToolCalls {
			msgs[i].ToolCalls = append(msgs[i].ToolCalls, llm.ToolCall{ID: c.ID, Name: c.Name, Arguments: json.RawMessage(c.Arguments)})
		}
		if size += messageBytes(&msgs[i]); size > maxTranscript {
			return nil
		}
	}
	return answered(msgs)
}

// cutTranscripts drops the session's earlier turns, oldest first, from
// the visit's conversation, where they are sent as transcripts, until the
// request is down to the target; a note at the start says how many are
// not shown.
func (c *compaction) cutTranscripts() {
	h, earlier := c.cut.hist, c.cut.earlier
	if c.tokens <= c.target || len(earlier) == 0 || len(earlier) != len(h.spans) || len(c.msgs) < h.n {
		return
	}
	from := 0 // where the first earlier turn's messages start
	if h.note {
		from = 1
		c.tokens += bytesPerToken - messageBytes(&c.msgs[0])/bytesPerTokenCut
	}
	notShown, first := earlier[0].NotShown, earlier[0].FirstNotShown
	cut, spans := 0, h.spans
	for len(earlier) > 0 && c.tokens > c.target {
		ex := earlier[0]
		c.turns++
		if ex.RunID != "" {
			c.runs = append(c.runs, ex.RunID)
		}
		if notShown == 0 {
			first = firstLine(ex.Prompt)
		}
		notShown++
		for i := from + cut; i < from+cut+spans[0]; i++ {
			c.tokens -= messageBytes(&c.msgs[i]) / bytesPerTokenCut
		}
		cut += spans[0]
		earlier, spans = earlier[1:], spans[1:]
	}
	note := llm.Message{Role: llm.RoleUser, Text: notShownText(notShown, first)}
	c.tokens += messageBytes(&note) / bytesPerToken
	c.msgs = append([]llm.Message{note}, c.msgs[from+cut:]...)
	c.earlier = slices.Clone(earlier)
	if len(c.earlier) > 0 {
		c.earlier[0].NotShown, c.earlier[0].FirstNotShown = notShown, first
	}
	c.hist = historyShown{note: true, spans: spans, n: 1}
	for _, n := range spans {
		c.hist.n += n
	}
}

// cacheKey is the run's llm.Request.CacheKey: one for its session, which
// its workers and children share (outside a session, the run's own),
// hashed so that it fits OpenAI's 64 characters and names nothing.
func (r *run) cacheKey() string {
	id := r.t.SessionID
	if id == "" {
		id = r.t.RunID
	}
	if id == "" {
		return ""
	}
	sum := sha256.Sum256([]byte("coda session " + id))
	return "coda-" + hex.EncodeToString(sum[:16])
}

// ForgetHistory is a session's history h without its oldest n exchanges,
// which a turn's compaction cut (Result.HistoryCut), then next, the turn
// itself: the first exchange kept counts those cut as not shown, as the
// cut's note did, so that the next turn is sent that note and the turns
// after it as the last request was.
func ForgetHistory(h []Exchange, n int, next Exchange) []Exchange {
	n = min(max(n, 0), len(h))
	if n == 0 {
		return append(h, next)
	}
	notShown, first := h[0].NotShown, h[0].FirstNotShown
	for _, ex := range h[:n] {
		if notShown == 0 {
			first = firstLine(ex.Prompt)
		}
		notShown++
	}
	kept := append(slices.Clone(h[n:]), next)
	kept[0].NotShown, kept[0].FirstNotShown = notShown, first
	return kept
}
