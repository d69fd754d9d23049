package engine

import (
	"strings"
)

// HistoryPrompt is the turn's prompt as the session's later turns read it:
// the text, then a note in place of each image.
func (t *Turn) HistoryPrompt() string {
	if len(t.Images) == 0 {
		return t.Prompt
	}
	var b strings.Builder
	b.WriteString(t.Prompt)
	for _, im := range t.Images {
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(im.HistoryNote())
	}
	return b.String()
}
