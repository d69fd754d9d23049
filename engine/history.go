package engine

// MaxHistory is how many of the session's earlier turns a run sees.
const MaxHistory = 20

// KeepHistory returns what of a session's history its next turn can use:
// the latest MaxHistory exchanges, each prompt and answer clipped, which is
// what a run's first visit carries (stage.go's prepare). A session that
// keeps only this stays small however long it runs, and its turns see
// exactly what they would have seen.
func KeepHistory(h []Exchange) []Exchange {
	if len(h) > MaxHistory {
		h = h[len(h)-MaxHistory:]
	}
	kept := make([]Exchange, len(h))
	for i, ex := range h {
		kept[i] = Exchange{Prompt: clip(ex.Prompt), Answer: clip(ex.Answer), RunID: ex.RunID}
	}
	return kept
}
