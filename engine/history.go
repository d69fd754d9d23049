package engine

import (
	"fmt"
	"strings"

	"github.com/coda-acp/coda/internal/textcut"
)

// A session's earlier turns, as its next turn sees them (DESIGN §6, §19).
// The run's first visit carries them before the prompt, in its first
// message: each earlier prompt and answer framed as data (frame.go), and,
// when the session has had more turns than MaxHistory, a line that says how
// many are not shown and what the first of them asked. The visit's
// status.json counts them (historyNotShown).

// MaxHistory is how many of the session's earlier turns a run sees.
const MaxHistory = 20

// KeepHistory returns what of a session's history its next turn can use:
// the latest MaxHistory exchanges, each prompt and answer clipped, which is
// what a run's first visit carries (stage.go's prepare). A session that
// keeps only this stays small however long it runs, and its turns see
// exactly what they would have seen: the first exchange kept counts those
// cut before it (Exchange.NotShown), however often the history was kept.
func KeepHistory(h []Exchange) []Exchange {
	var cut []Exchange
	if len(h) > MaxHistory {
		cut, h = h[:len(h)-MaxHistory], h[len(h)-MaxHistory:]
	}
	kept := make([]Exchange, len(h))
	for i, ex := range h {
		kept[i] = Exchange{Prompt: clip(ex.Prompt), Answer: clip(ex.Answer), RunID: ex.RunID, Masked: ex.Masked, NotShown: ex.NotShown, FirstNotShown: ex.FirstNotShown, Transcript: ex.Transcript}
	}
	if len(cut) > 0 {
		first := &kept[0]
		first.FirstNotShown = cut[0].FirstNotShown
		if cut[0].NotShown == 0 {
			first.FirstNotShown = firstLine(cut[0].Prompt)
		}
		for _, ex := range cut {
			first.NotShown += ex.NotShown + 1
		}
	}
	return kept
}

// maskHistory is h as the model is shown it: each earlier prompt and
// answer masked of the secrets of the private files under the roots it
// carries (taint.Secrets.MaskFound), as later stages' preambles are (DESIGN
// §19), gate on or off: an answer the gate let through (off, or `allow`)
// went to the user, not to every later request. An exchange that masking
// changed is marked Masked, so the record's prompt.md writes it out as
// the model was sent it rather than naming a run whose record has it in
// clear.
func (r *run) maskHistory(h []Exchange) []Exchange {
	secrets := r.share.secrets
	for _, ex := range h { // all found first: a line of a file one answer brings is masked in every exchange
		for _, text := range []string{ex.Prompt, ex.Answer, ex.FirstNotShown} {
			secrets.Read(secrets.Found(text, nil))
		}
		for _, m := range ex.Transcript {
			secrets.Read(secrets.Found(m.Text, nil))
		}
	}
	out := make([]Exchange, len(h))
	for i, ex := range h {
		m := ex
		m.Prompt, m.Answer, m.FirstNotShown = secrets.Mask(ex.Prompt), secrets.Mask(ex.Answer), secrets.Mask(ex.FirstNotShown)
		m.Masked = ex.Masked || m.Prompt != ex.Prompt || m.Answer != ex.Answer
		m.Transcript = maskMessages(ex.Transcript, secrets.Mask)
		out[i] = m
	}
	return out
}

// firstLine is the first line of a prompt that is not blank, cut at 200
// bytes: what a cut history says of the first turn it does not show.
func firstLine(s string) string {
	for line := range strings.Lines(s) {
		if line = strings.TrimSpace(line); line != "" {
			if cut := textcut.At(line, 200); len(cut) < len(line) {
				return cut + " …"
			}
			return line
		}
	}
	return ""
}

// historyText is the session's earlier turns h as the run's first visit
// shows them, before its task. For the record (named), an earlier turn
// that has a run id is named by it instead of written out, unless masked
// (Exchange.Masked): its own record has it whole, and a long session would otherwise write out its whole
// history again at every turn.
func historyText(h []Exchange, named bool) string {
	if len(h) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("## This session's earlier turns\n\n")
	n := h[0].NotShown
	if n > 0 {
		exchanges := "exchanges are"
		if n == 1 {
			exchanges = "exchange is"
		}
		fmt.Fprintf(&b, "%d earlier %s not shown; the first was:\n%s\n\n", n, exchanges, Frame("turn 1: the user's prompt, its first line", h[0].FirstNotShown))
	}
	for i, ex := range h {
		turn := n + i + 1
		if named && ex.RunID != "" && !ex.Masked {
			fmt.Fprintf(&b, "[earlier turn %d: run %s]\n", turn, ex.RunID)
			continue
		}
		fmt.Fprintf(&b, "%s\n%s\n", Frame(fmt.Sprintf("turn %d: the user's prompt", turn), ex.Prompt), Frame(fmt.Sprintf("turn %d: the answer", turn), ex.Answer))
	}
	b.WriteString("\n## The task\n")
	return b.String()
}
