package acp

import (
	"encoding/json"
	"fmt"
)

// Commentary (DESIGN §8): for an agent that answers (it advertises
// finalOutput), every text of a turn that is not its answer — the model's
// commentary, a stage's reply that may yet be taken as the answer, its
// reasoning — streams as agent_thought_chunk, and the accepted answer is
// the turn's only agent_message_chunk text (the no_answer line stays a
// message: it is what the user reads instead). A client that joins the
// message text, as acpx and the SDK's examples do, shows the answer once and
// alone; an editor that folds thoughts shows the work above it.
//
// --commentary message (config.toml's commentary, a session's or a
// prompt's _meta.coda.commentary) streams the commentary as messages
// instead, as coda did before; an agent that answers nothing streams as a
// chat agent does, its commentary as messages.

// The values of --commentary and _meta.coda.commentary.
const (
	CommentaryThought = "thought"
	CommentaryMessage = "message"
)

// CheckCommentary refuses a commentary setting that is neither; "" is the
// default.
func CheckCommentary(v string) error {
	switch v {
	case "", CommentaryThought, CommentaryMessage:
		return nil
	}
	return fmt.Errorf("commentary %q: want %q (the work streamed as thoughts, the answer the only message) or %q (the work streamed as messages)", v, CommentaryThought, CommentaryMessage)
}

// commentary is a request's _meta.coda.commentary, "" when it has none.
func (m *requestMeta) commentary() (string, error) {
	if m == nil || m.Coda == nil || isNull(m.Coda.Commentary) {
		return "", nil
	}
	var v string
	if err := json.Unmarshal(m.Coda.Commentary, &v); err != nil || v == "" || CheckCommentary(v) != nil {
		return "", fmt.Errorf("%w: _meta.coda.commentary: want %q or %q", ErrInvalidParams, CommentaryThought, CommentaryMessage)
	}
	return v, nil
}

// commentaryAsThought says how a prompt's turn streams its commentary: as
// thoughts unless the agent answers nothing or the prompt, the session or
// the launch (in that order) asks for messages.
func (s *Server) commentaryAsThought(sess *session, meta *requestMeta) (bool, error) {
	v, err := meta.commentary()
	if err != nil {
		return false, err
	}
	if v == "" {
		sess.mu.Lock()
		v = sess.commentary
		sess.mu.Unlock()
	}
	if v == "" {
		v = s.opts.Commentary
	}
	return v != CommentaryMessage && s.out.Answers(), nil
}
