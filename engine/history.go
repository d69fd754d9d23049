package engine

// maxHistory is how many of the session's earlier turns a run sees.
const maxHistory = 20

// KeepHistory returns what of a session's history its next turn can use:
// the latest maxHistory exchanges, each prompt and answer clipped, which is
// what a run's first visit carries (stage.go's prepare). A session that
// keeps only this stays small however long it runs, and its turns see
// exactly what they would have seen.
func KeepHistory(h []Exchange) []Exchange {
	if len(h) > maxHistory {
		h = h[len(h)-maxHistory:]
	}
	kept := make([]Exchange, len(h))
	for i, ex := range h {
		kept[i] = Exchange{Prompt: clip(ex.Prompt), Answer: clip(ex.Answer), RunID: ex.RunID}
	}
	return kept
}
