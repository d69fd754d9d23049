package tools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine"
)

// askingWS is a workspace someone answers: it records each question and
// gives reply.
type askingWS struct {
	engine.Workspace
	can   bool
	asked []engine.Question
	reply engine.Reply
}

func (w *askingWS) CanAsk() bool { return w.can }

func (w *askingWS) Ask(_ context.Context, q engine.Question) (engine.Reply, error) {
	w.asked = append(w.asked, q)
	return w.reply, nil
}

// ask_user is offered only where someone can answer; it asks the question
// with its choices or form, and gives the model the answer, or says the
// user declined or dismissed it; bad arguments are the model's to fix.
func TestAskUser(t *testing.T) {
	tool := Builtin()["ask_user"]
	if _, ok := tool.(engine.Conditional); !ok {
		t.Fatal("ask_user is not Conditional")
	}
	c := tool.(engine.Conditional)
	if c.OfferedIn(newWS(t)) || c.OfferedIn(&askingWS{Workspace: newWS(t)}) {
		t.Error("ask_user is offered where nobody can answer")
	}
	ws := &askingWS{Workspace: newWS(t), can: true, reply: engine.Reply{Action: engine.ReplyAccept, Content: map[string]any{"answer": "staging"}}}
	if !c.OfferedIn(ws) {
		t.Fatal("ask_user is not offered where someone can answer")
	}
	res := tool.Run(context.Background(), &engine.Call{ID: "t-1", Workspace: ws, Args: json.RawMessage(`{"question":"Which environment?","choices":["staging","prod"]}`)})
	if res.IsError || res.Output != "The user answered: staging" {
		t.Errorf("accepted: %+v", res)
	}
	if len(ws.asked) != 1 || ws.asked[0].Message != "Which environment?" || len(ws.asked[0].Choices) != 2 || ws.asked[0].ToolCallID != "t-1" {
		t.Errorf("asked %+v", ws.asked)
	}
	ws.reply = engine.Reply{Action: engine.ReplyAccept, Content: map[string]any{"name": "db", "port": 5432.0}}
	res = tool.Run(context.Background(), &engine.Call{Workspace: ws, Args: json.RawMessage(`{"question":"Which database?","fields":{"type":"object","properties":{"name":{"type":"string"},"port":{"type":"integer"}}}}`)})
	if res.IsError || res.Output != `The user answered: {"name":"db","port":5432}` || len(ws.asked[1].Fields) == 0 {
		t.Errorf("a form: %+v, asked %+v", res, ws.asked[1])
	}
	for action, want := range map[string]string{engine.ReplyDecline: "declined", engine.ReplyCancel: "dismissed"} {
		ws.reply = engine.Reply{Action: action}
		res = tool.Run(context.Background(), &engine.Call{Workspace: ws, Args: json.RawMessage(`{"question":"Which?"}`)})
		if res.IsError || !strings.Contains(res.Output, want) {
			t.Errorf("%s: %+v; want a result (not an error) saying %s", action, res, want)
		}
	}
	for args, want := range map[string]string{
		`{}`: "question is required",
		`{"question":"Q","choices":["a"],"fields":{"properties":{"a":{"type":"string"}}}}`: "not both",
		`{"question":"Q","fields":{"properties":{"a":{"type":"object"}}}}`:                 "property a",
		`{"question":"Q","extra":1}`: "not {question",
	} {
		res = tool.Run(context.Background(), &engine.Call{Workspace: ws, Args: json.RawMessage(args)})
		if !res.IsError || !strings.Contains(res.Output, want) {
			t.Errorf("%s: %+v; want an error saying %q", args, res, want)
		}
	}
}
