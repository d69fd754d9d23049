package acp

import (
	"encoding/json"
	"fmt"

	"github.com/coda-acp/coda/acp/history"
	statestore "github.com/coda-acp/coda/store"
)

// The sessions' files are the store's (store/session.go: append-only
// JSON Lines, locked per append, the listing's index); what acp keeps of
// them is the mapping: a session's fields as the store's SessionState, its
// option values (history.Picks), and a prompt's blocks for acp/history.

// stateOf is the session as its file keeps it.
func stateOf(sess *session) statestore.SessionState {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	opts := history.Picks{Format: sess.config, Model: sess.model, Effort: sess.effort, Mode: sess.mode, Commentary: sess.commentary}.Kept()
	state := statestore.SessionState{
		ID: sess.id, Cwd: sess.cwd, AdditionalDirectories: sess.additional, Title: sess.title,
		CreatedAt: sess.createdAt, Output: sess.metaRaw, Options: opts,
	}
	// What the taint gate keeps of the session (paths only, no content):
	// the files its turns read and wrote from private content.
	if t := sess.taint; len(t.Read) > 0 || len(t.Wrote) > 0 {
		state.Taint, _ = json.Marshal(&t)
	}
	return state
}

// keptOptions sets a restored session's option values from its file.
func keptOptions(sess *session, opts map[string]string) {
	p := history.PicksOf(opts)
	sess.config, sess.model, sess.effort, sess.mode, sess.commentary = p.Format, p.Model, p.Effort, p.Mode, p.Commentary
}

// checkSessionID refuses a session id that is not a plain name before it
// is used as a file name (statestore.CheckSessionID).
func checkSessionID(id string) error {
	if err := statestore.CheckSessionID(id); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidParams, err)
	}
	return nil
}

// blocksOf is what the session's history keeps of a prompt's blocks.
func blocksOf(blocks []contentBlock) []history.Block {
	out := make([]history.Block, len(blocks))
	for i, c := range blocks {
		out[i] = history.Block{Type: c.Type, Text: c.Text, URI: c.URI, Name: c.Name, Title: c.Title, MimeType: c.MimeType, Data: c.Data}
		if r := c.Resource; r != nil {
			out[i].Embedded, out[i].ResourceURI, out[i].ResourceMimeType = true, r.URI, r.MimeType
		}
	}
	return out
}
