package editor

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/coda-acp/coda/engine"
)

// Asking the user (DESIGN §22): a client that advertises elicitation in
// form mode (clientCapabilities.elicitation.form) is asked through
// elicitation/create, scoped to the session and, when a tool call asks, to
// that call. The session's workspace is then an engine.Asker, so the
// model's ask_user is offered; without the capability it is not, and
// nothing else changes.

// elicitParams are elicitation/create's params, form mode, session scope.
type elicitParams struct {
	SessionID       string          `json:"sessionId"`
	ToolCallID      string          `json:"toolCallId,omitempty"`
	Mode            string          `json:"mode"` // "form"
	Message         string          `json:"message"`
	RequestedSchema json.RawMessage `json:"requestedSchema"`
}

// elicitResult is what the client answers.
type elicitResult struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content"`
}

func (w *Workspace) CanAsk() bool { return w.caps.elicitForm }

// Ask asks the user q through elicitation/create; no timeout, as a
// permission has none: the user may think as long as the turn runs.
func (w *Workspace) Ask(ctx context.Context, q engine.Question) (engine.Reply, error) {
	if !w.caps.elicitForm {
		return engine.Reply{}, fmt.Errorf("the editor does not take questions (no elicitation capability)")
	}
	p := elicitParams{SessionID: w.sessionID, ToolCallID: q.ToolCallID, Mode: "form", Message: q.Message, RequestedSchema: formOf(q)}
	var res elicitResult
	if err := w.conn.Call(ctx, "elicitation/create", p, &res); err != nil {
		return engine.Reply{}, callError(ctx, "elicitation/create", err)
	}
	switch res.Action {
	case engine.ReplyAccept:
		return engine.Reply{Action: engine.ReplyAccept, Content: res.Content}, nil
	case engine.ReplyDecline:
		return engine.Reply{Action: engine.ReplyDecline}, nil
	default: // cancel, or an action coda does not know
		return engine.Reply{Action: engine.ReplyCancel}, nil
	}
}

// formOf is the form a question asks the user to fill in: its own fields,
// else one field, "answer", free or one of its choices.
func formOf(q engine.Question) json.RawMessage {
	if len(q.Fields) > 0 {
		return q.Fields
	}
	answer := map[string]any{"type": "string", "title": "Answer"}
	if len(q.Choices) > 0 {
		answer["enum"] = q.Choices
	}
	b, _ := json.Marshal(map[string]any{
		"type": "object", "properties": map[string]any{"answer": answer}, "required": []string{"answer"},
	})
	return b
}

// elicitPermission asks a question that takes a reason (the taint gate's,
// engine.PermissionRequest.Reason) through elicitation/create: the call as
// the question, the permission's choices, and a field for the reason,
// which goes back in req.Reason. It returns the choice; "" for none.
func (w *Workspace) elicitPermission(ctx context.Context, req engine.PermissionRequest, alwaysName string) (string, error) {
	msg := req.ToolCall.Title
	for _, c := range req.ToolCall.Content {
		if c.Text != "" {
			msg += "\n\n" + c.Text
		}
	}
	schema, _ := json.Marshal(map[string]any{
		"type": "object",
		"properties": map[string]any{
			"decision": map[string]any{"type": "string", "title": "Decision", "oneOf": []map[string]string{
				{"const": optionAllowOnce, "title": "Allow once"},
				{"const": optionAllowAlways, "title": alwaysName},
				{"const": optionRejectOnce, "title": "Reject"},
			}},
			"reason": map[string]any{"type": "string", "title": "Reason (optional)", "maxLength": 2000},
		},
		"required": []string{"decision"},
	})
	p := elicitParams{SessionID: w.sessionID, ToolCallID: req.ToolCall.ID, Mode: "form", Message: msg, RequestedSchema: schema}
	var res elicitResult
	if err := w.conn.Call(ctx, "elicitation/create", p, &res); err != nil {
		return "", callError(ctx, "elicitation/create", err)
	}
	if res.Action != engine.ReplyAccept {
		return "", nil // declined or dismissed: not allowed
	}
	if r, ok := res.Content["reason"].(string); ok && req.Reason != nil {
		*req.Reason = r
	}
	choice, _ := res.Content["decision"].(string)
	return choice, nil
}
