package engine_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/llm"
)

// png is the smallest start of bytes that read as a PNG.
var png = []byte("\x89PNG\r\n\x1a\n" + strings.Repeat("\x00", 100))

// replies is a Model that plays its responses in order and keeps the
// requests it was sent.
type replies struct {
	resps []*llm.Response
	reqs  []*llm.Request
}

func (r *replies) Name() string { return "replies" }
func (r *replies) Stream(_ context.Context, req *llm.Request, _ func(llm.Delta) error) (*llm.Response, error) {
	r.reqs = append(r.reqs, req)
	resp := r.resps[0]
	r.resps = r.resps[1:]
	return resp, nil
}

func call(name, args string) *llm.Response {
	return &llm.Response{ToolCalls: []llm.ToolCall{{ID: "c", Name: name, Arguments: json.RawMessage(args)}}}
}

// Every stage's task message of the turn carries the prompt's images; the
// session's later turns read a note in their place.
func TestRun_images(t *testing.T) {
	turn := newTurn(t, twoStages, "")
	m := &replies{resps: []*llm.Response{call("transition", `{"to":"report"}`), call("submit_output", `{"content":"A cat."}`)}}
	turn.Models, turn.UserModel = models{"m": m}, "m"
	turn.Prompt = "What is in the picture?"
	turn.Images = []llm.Image{{MIMEType: "image/png", Data: png}}
	ended(t, runTurn(context.Background(), turn, &events{}), engine.StatusAnswered, "end_turn")
	for i, req := range m.reqs {
		task := req.Messages[0]
		if len(task.Images) != 1 || task.Images[0].MIMEType != "image/png" || !strings.HasSuffix(task.Text, "What is in the picture?") {
			t.Errorf("stage %d's task message: %q with %d images", i+1, task.Text, len(task.Images))
		}
	}
	want := "What is in the picture?\n\n[The user attached an image here (image/png, 108 bytes); it was shown only in that turn.]"
	if got := turn.HistoryPrompt(); got != want {
		t.Errorf("HistoryPrompt() = %q, want %q", got, want)
	}
	if got := engine.StandIn(turn.Images[0]); got != "[The user attached an image (image/png, 108 bytes); this model cannot see images.]" {
		t.Errorf("StandIn = %q", got)
	}
}
