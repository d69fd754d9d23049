package engine

// KeepHistory returns what of a session's history its next turn can use:
// the latest exchanges a run sees, each prompt and answer clipped as the run
// clips them. A session that keeps only this stays small however long it
// runs, and its turns see exactly what they would have seen.
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
