package engine

import (
	"testing"

	"github.com/coda-acp/coda/engine/llm"
)

// However a reply is cut into pieces, the think split streams the same
// thought and text as splitThink makes of the whole.
func TestThinkSplit_pieces(t *testing.T) {
	for _, reply := range []string{
		"<think>weigh it</think>\n\n{\"a\": 1}",
		"  \n<think>\nweigh it\n</think>answer",
		"<think>never closed",
		"<thinking is not the tag",
		"plain answer",
		"<th",
		"",
		"<think></think>",
		"answer <think>later</think>",
	} {
		whole := llm.Response{Text: reply}
		splitThink(&whole)
		for cut1 := 0; cut1 <= len(reply); cut1++ {
			for cut2 := cut1; cut2 <= len(reply); cut2++ {
				var s thinkSplit
				var thought, text string
				for _, piece := range []string{reply[:cut1], reply[cut1:cut2], reply[cut2:]} {
					th, tx := s.feed(piece)
					thought, text = thought+th, text+tx
				}
				th, tx := s.flush()
				thought, text = thought+th, text+tx
				if text != whole.Text || trimmed(thought) != whole.Thinking {
					t.Fatalf("%q cut at %d, %d: thought %q, text %q; whole: %q, %q", reply, cut1, cut2, thought, text, whole.Thinking, whole.Text)
				}
			}
		}
	}
}

func trimmed(s string) string {
	r := llm.Response{Text: "<think>" + s + "</think>"}
	splitThink(&r)
	return r.Thinking
}
