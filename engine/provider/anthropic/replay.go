package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/provider"
)

// Thinking goes back as it came
// (https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking#preserving-thinking-blocks):
// every thinking block with its signature, every redacted_thinking block
// with its data, unchanged and in their places among the text and tool_use
// blocks (with interleaved thinking, a reply may think between its calls;
// the later models put the text between calls in thinking blocks too). A
// block signed by one model is refused by another, so a reply of another
// model goes back without its thinking, which the API allows for earlier
// turns (for the tool loop a call continues, see loopThinking).
//
// A Response's Replay keeps the reply's blocks in order, each thinking
// block with its signature, but not their text: the message carries that
// already (Text, Thinking), and it is cut out again by length.

// replay is what a reply keeps for later calls of the turn.
type replay struct {
	Model  string        `json:"claude"` // the model that signed the blocks
	Blocks []replayBlock `json:"blocks"`
}

// A replayBlock is one block of a reply: thinking ("h", N bytes of the
// message's Thinking, with its signature), redacted thinking ("r", its
// data), text ("t", N bytes of the message's Text) or the message's next
// tool call ("c").
type replayBlock struct {
	Kind string `json:"k"`
	N    int    `json:"n,omitempty"`
	Sig  string `json:"s,omitempty"`
	Data string `json:"d,omitempty"`
}

const (
	kindThinking = provider.ReplayThinking
	kindRedacted = "r"
	kindText     = provider.ReplayText
	kindCall     = provider.ReplayCall
)

// thinks reports whether the replay holds thinking to send back: only
// then, or when the reply called tools (see loopThinking), is it kept.
func (r *replay) thinks() bool {
	for _, b := range r.Blocks {
		if b.Kind == kindThinking && b.Sig != "" || b.Kind == kindRedacted && b.Data != "" {
			return true
		}
	}
	return false
}

// calls reports whether the reply called a tool.
func (r *replay) calls() bool {
	return slices.ContainsFunc(r.Blocks, func(b replayBlock) bool { return b.Kind == kindCall })
}

// fits reports whether the replay describes msg, to the byte.
func (r *replay) fits(msg *llm.Message) bool {
	ok, thoughts := provider.ReplayFits(msg, len(r.Blocks), func(i int) (string, int) { return r.Blocks[i].Kind, r.Blocks[i].N }, kindRedacted)
	return ok && thoughts
}

// assistantBlocks is an assistant message as content blocks: block for
// block as it came when it is a reply of this model with its replay, else
// its text and its calls. A replay in the array form of coda's earlier
// versions (the signed blocks alone) goes first, as they did.
func (m *Model) assistantBlocks(msg *llm.Message) []block {
	var blocks []block
	var r replay
	raw := bytes.TrimSpace(msg.Replay)
	switch {
	case len(raw) > 0 && raw[0] == '[':
		var signed []block
		if json.Unmarshal(raw, &signed) == nil {
			for _, b := range signed {
				if b.Type == "thinking" && b.Signature != "" && b.Thinking != nil || b.Type == "redacted_thinking" && b.Data != "" {
					blocks = append(blocks, block{Type: b.Type, Thinking: b.Thinking, Signature: b.Signature, Data: b.Data})
				}
			}
		}
	case len(raw) > 0 && json.Unmarshal(raw, &r) == nil && r.Model != "" && r.fits(msg):
		same := r.Model == m.model
		at := provider.NewReplayCursor(msg)
		for _, b := range r.Blocks {
			switch b.Kind {
			case kindThinking:
				s := at.Thinking(b.N)
				if same && b.Sig != "" {
					blocks = append(blocks, block{Type: "thinking", Thinking: &s, Signature: b.Sig})
				}
			case kindRedacted:
				if same && b.Data != "" {
					blocks = append(blocks, block{Type: "redacted_thinking", Data: b.Data})
				}
			case kindText:
				if s := at.Text(b.N); s != "" {
					blocks = append(blocks, block{Type: "text", Text: s})
				}
			case kindCall:
				blocks = append(blocks, toolUse(at.Call()))
			}
		}
		return blocks
	}
	if msg.Text != "" {
		blocks = append(blocks, block{Type: "text", Text: msg.Text})
	}
	for i := range msg.ToolCalls {
		blocks = append(blocks, toolUse(&msg.ToolCalls[i]))
	}
	return blocks
}

func toolUse(tc *llm.ToolCall) block {
	return block{Type: "tool_use", ID: tc.ID, Name: tc.Name, Input: input(tc)}
}

// A tool loop's thinking (the rule the API words "When `thinking` is
// enabled, a final `assistant` message must start with a thinking block
// (preceeding the lastmost set of `tool_use` and `tool_result` blocks)",
// https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking#preserving-thinking-blocks):
// with thinking on, a call that continues a tool loop sends the loop's
// assistant message back starting with its thinking. A reply of this
// model does (replay), and one it wrote without thinking has none to send;
// but a reply of another model (a stage's fallback taking over mid-loop)
// goes back without its thinking, which this model would refuse as
// another's signature. That one call is then made with thinking off, the
// API's own remedy ("To avoid this requirement, disable `thinking`"),
// where the model can turn it off; where it cannot, the loop's calls and
// results are written out as text, which the rule does not bind.

// loopThinking keeps r, whose thinking is on, within the rule: it reports
// whether thinking is still on.
func (m *Model) loopThinking(req *llm.Request, r *request) bool {
	n := len(r.Messages)
	if n < 2 || !slices.ContainsFunc(r.Messages[n-1].Content, func(b block) bool { return b.Type == "tool_result" }) {
		return true
	}
	if first := r.Messages[n-2].Content[0].Type; first == "thinking" || first == "redacted_thinking" || m.ownThoughtless(req) {
		return true
	}
	switch {
	case r.Thinking.Type == "enabled", r.Thinking.Type == "adaptive" && (m.opts.Thinking == ThinkingAdaptive || m.opts.Thinking == ThinkingBoth || m.opts.Thinking == ""):
		r.Thinking = nil // off unless asked
	case r.Thinking.Type == "adaptive" && m.opts.Thinking == ThinkingAdaptiveOn:
		r.Thinking = &thinking{Type: "disabled"}
	default:
		// Always on (or between_tools, which is thinking too).
		foldLoop(r)
		m.once.Warn(m.opts.Log, "loop-folded", "another model's tool calls, which this model cannot take back without their thinking, are sent as text", "model", m.opts.Name)
		return true
	}
	m.once.Warn(m.opts.Log, "loop-unthought", "a call that continues another model's tool calls is made without thinking, which this model would require of them", "model", m.opts.Name)
	return false
}

// ownThoughtless reports whether the last assistant message of req is a
// reply of this model that called tools without thinking: it has none to
// send back.
func (m *Model) ownThoughtless(req *llm.Request) bool {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		msg := &req.Messages[i]
		if msg.Role != llm.RoleAssistant {
			continue
		}
		var r replay
		return json.Unmarshal(msg.Replay, &r) == nil && r.Model == m.model && r.fits(msg) && !r.thinks()
	}
	return false
}

// foldLoop writes the tool loop that r ends with as text: the last
// assistant message's tool_use blocks and the tool_result blocks that
// answer them.
func foldLoop(r *request) {
	n := len(r.Messages)
	names := map[string]string{}
	for i, b := range r.Messages[n-2].Content {
		if b.Type == "tool_use" {
			names[b.ID] = b.Name
			r.Messages[n-2].Content[i] = block{Type: "text", Text: fmt.Sprintf("[I called %s with %s]", b.Name, b.Input)}
		}
	}
	for i, b := range r.Messages[n-1].Content {
		if b.Type != "tool_result" {
			continue
		}
		what := "returned"
		if b.IsError {
			what = "failed"
		}
		r.Messages[n-1].Content[i] = block{Type: "text", Text: fmt.Sprintf("[%s %s:]\n%s", names[b.ToolUseID], what, b.Content)}
	}
}
