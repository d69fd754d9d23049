package acp

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/internal/bytesize"
	statestore "github.com/coda-acp/coda/store"
)

// The sessions' files are the store's (store/session.go: append-only
// JSON Lines, locked per append, the listing's index); what acp keeps of
// them is the mapping: a session's fields as the store's SessionState, its
// option values by name, and a prompt as session/load shows it again.

// Option values by the names the sessions' files keep them under; "" is
// the default and is not kept.
const (
	keptFormat = "output_format"
	keptModel  = "model"
	keptEffort = "effort"
	keptMode   = "mode"
	// keptCommentary is the session's _meta.coda.commentary.
	keptCommentary = "commentary"
)

// stateOf is the session as its file keeps it.
func stateOf(sess *session) statestore.SessionState {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	opts := map[string]string{}
	for k, v := range map[string]string{keptFormat: sess.config, keptModel: sess.model, keptEffort: sess.effort, keptMode: sess.mode, keptCommentary: sess.commentary} {
		if v != "" {
			opts[k] = v
		}
	}
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
	sess.config, sess.model, sess.effort, sess.mode = opts[keptFormat], opts[keptModel], opts[keptEffort], opts[keptMode]
	sess.commentary = opts[keptCommentary]
}

// exchangeOf is a finished turn as the session's file keeps it.
func exchangeOf(prompt []contentBlock, runID string, ex engine.Exchange, streamed []json.RawMessage, closing [][]byte) *statestore.Exchange {
	kept := engine.KeepHistory([]engine.Exchange{ex})[0]
	stored := &statestore.Exchange{Prompt: shownPrompt(prompt), History: statestore.Said{Prompt: kept.Prompt, Answer: kept.Answer, Masked: kept.Masked}, RunID: runID, Streamed: streamed,
		Transcript: engine.EncodeTranscript(kept.Transcript)}
	for _, c := range closing {
		stored.Closing = append(stored.Closing, c)
	}
	return stored
}

// historyOf is a kept exchange as the next turn sees it.
func historyOf(ex *statestore.Exchange) engine.Exchange {
	return engine.Exchange{Prompt: ex.History.Prompt, Answer: ex.History.Answer, RunID: ex.RunID, Masked: ex.History.Masked,
		Transcript: engine.DecodeTranscript(ex.Transcript)}
}

// checkSessionID refuses a session id that is not a plain name before it
// is used as a file name (statestore.CheckSessionID).
func checkSessionID(id string) error {
	if err := statestore.CheckSessionID(id); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidParams, err)
	}
	return nil
}

// shownPrompt is the prompt as session/load replays it: text and links;
// an embedded resource becomes a link to it and an image a line naming it,
// so the file does not keep a copy of every file or picture the user
// attached, and other content a one-word stand-in.
func shownPrompt(blocks []contentBlock) []statestore.PromptBlock {
	out := make([]statestore.PromptBlock, 0, len(blocks))
	for _, c := range blocks {
		switch c.Type {
		case "text":
			out = append(out, statestore.PromptBlock{Type: "text", Text: c.Text})
		case "resource_link":
			out = append(out, statestore.PromptBlock{Type: "resource_link", URI: c.URI, Name: c.Name, Title: c.Title, MimeType: c.MimeType})
		case "resource":
			if c.Resource != nil {
				out = append(out, statestore.PromptBlock{Type: "resource_link", URI: c.Resource.URI, Name: linkName(c.Resource.URI), MimeType: c.Resource.MimeType})
			}
		case "image":
			out = append(out, statestore.PromptBlock{Type: "text", Text: imageStandIn(c)})
		default:
			out = append(out, statestore.PromptBlock{Type: "text", Text: "[" + c.Type + "]"})
		}
	}
	return out
}

// imageStandIn names an attached image where a replay shows it: "[image
// chart.png, image/png, 2 KB]".
func imageStandIn(c contentBlock) string {
	var parts []string
	if c.URI != "" {
		parts = append(parts, linkName(c.URI))
	}
	size := base64.RawStdEncoding.DecodedLen(len(strings.TrimRight(c.Data, "=")))
	parts = append(parts, c.MimeType, bytesize.Format(size))
	return "[image " + strings.Join(parts, ", ") + "]"
}

// linkName is a resource's name for its link: the last element of its URI.
func linkName(uri string) string {
	name := uri
	if i := strings.LastIndexByte(strings.TrimRight(uri, "/"), '/'); i >= 0 {
		name = strings.TrimRight(uri, "/")[i+1:]
	}
	if name == "" {
		return uri
	}
	return name
}
