package engine

import (
	"context"
	"encoding/json"
)

// Asking the user (DESIGN §22). A Workspace through which someone can
// answer a question is also an Asker: over ACP, a client that advertises
// elicitation (form); `coda run`, on a terminal. The model asks through
// the ask_user tool, which is offered only where an Asker can ask
// (Conditional), so a model never waits on nobody: not in a detached or
// headless run, not in a worker or a child (their workspace asks
// nothing).

// An Asker asks the user a question and waits for the answer.
type Asker interface {
	// CanAsk reports whether someone can be asked now.
	CanAsk() bool
	// Ask asks q; a decline or a dismissal is a Reply, not an error. An
	// error means the user could not be asked.
	Ask(ctx context.Context, q Question) (Reply, error)
}

// A Question is what the user is asked.
type Question struct {
	// Message is the question, as the user reads it.
	Message string
	// Fields, when set, is the form to fill in: a flat JSON Schema object
	// as ACP's ElicitationSchema has it (string, number, integer, boolean
	// and string-array properties). Without it the user answers in one
	// field, "answer": free text, or one of Choices.
	Fields  json.RawMessage
	Choices []string
	// ToolCallID is the call that asks, when one does.
	ToolCallID string
}

// What the user did with a question.
const (
	ReplyAccept  = "accept"
	ReplyDecline = "decline"
	ReplyCancel  = "cancel"
)

// A Reply is the user's answer to a Question.
type Reply struct {
	Action  string         // ReplyAccept, ReplyDecline or ReplyCancel
	Content map[string]any // the fields' values, when accepted
}

// AskerOf is ws as an Asker that can ask now, if it is one.
func AskerOf(ws Workspace) (Asker, bool) {
	a, ok := ws.(Asker)
	return a, ok && a.CanAsk()
}

// A Conditional is a Tool offered only in some workspaces (ask_user,
// where someone can answer): a stage that lists it goes without it
// elsewhere, without a warning.
type Conditional interface {
	OfferedIn(ws Workspace) bool
}
