package provider

import "github.com/coda-acp/coda/engine/llm"

// A reply's replay (llm.Message.Replay) names its pieces in the order the
// reply made them, each by a kind and a length, so that what the message
// already carries (its Text, Thinking and ToolCalls) is not kept twice:
// the skeleton Anthropic's (anthropic/replay.go) and Gemini's
// (gemini/replay.go) replays share. A vendor adds what its pieces carry
// (a signature, redacted data) and may add kinds that take none of the
// message.
const (
	ReplayText     = "t" // N bytes of the message's Text
	ReplayThinking = "h" // N bytes of its Thinking
	ReplayCall     = "c" // its next tool call
)

// ReplayFits reports whether a replay's pieces describe msg: its text and
// calls to the byte (ok), and its thinking (thoughts). piece(i) is the
// i-th of n pieces' kind and length; a negative length, or a kind that is
// neither the three nor one of other, fits nothing.
func ReplayFits(msg *llm.Message, n int, piece func(i int) (kind string, n int), other ...string) (ok, thoughts bool) {
	text, thought, calls := 0, 0, 0
	for i := range n {
		kind, n := piece(i)
		if n < 0 {
			return false, false
		}
		switch kind {
		case ReplayText:
			text += n
		case ReplayThinking:
			thought += n
		case ReplayCall:
			calls++
		default:
			if !contains(other, kind) {
				return false, false
			}
		}
	}
	return text == len(msg.Text) && calls == len(msg.ToolCalls), thought == len(msg.Thinking)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// A ReplayCursor hands out a message's text, thinking and calls in the
// order a replay that fits it (ReplayFits) names them.
type ReplayCursor struct {
	msg                 *llm.Message
	text, thought, call int
}

// NewReplayCursor starts at the beginning of msg.
func NewReplayCursor(msg *llm.Message) *ReplayCursor { return &ReplayCursor{msg: msg} }

// Text is the next n bytes of the message's text.
func (c *ReplayCursor) Text(n int) string {
	s := c.msg.Text[c.text : c.text+n]
	c.text += n
	return s
}

// Thinking is the next n bytes of the message's thinking.
func (c *ReplayCursor) Thinking(n int) string {
	s := c.msg.Thinking[c.thought : c.thought+n]
	c.thought += n
	return s
}

// Call is the message's next tool call.
func (c *ReplayCursor) Call() *llm.ToolCall {
	tc := &c.msg.ToolCalls[c.call]
	c.call++
	return tc
}
