package engine_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine"
)

// png is the smallest start of bytes that read as a PNG.
var png = []byte("\x89PNG\r\n\x1a\n" + strings.Repeat("\x00", 100))

// An attached image is checked for its type (by its bytes) and its size.
func TestCheckImage(t *testing.T) {
	tests := []struct {
		mime string
		data []byte
		want string // the type given back, or the error's words
	}{
		{"image/png", png, "image/png"},
		{"IMAGE/JPEG", png, "image/png"}, // the bytes decide
		{"image/jpeg", []byte("\xff\xd8\xff\xe0" + strings.Repeat("\x00", 20)), "image/jpeg"},
		{"image/svg+xml", []byte("<svg/>"), `mimeType "image/svg+xml": coda takes image/png, image/jpeg, image/gif, image/webp`},
		{"image/png", []byte("hello, world"), "data is not a PNG, JPEG, GIF or WebP image (it looks like text/plain)"},
		{"image/png", append(png, make([]byte, engine.MaxImageSize)...), "the image is 20.0 MB, over the 20.0 MB limit"},
	}
	for _, tt := range tests {
		got, err := engine.CheckImage(tt.mime, tt.data)
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("CheckImage(%q, %d bytes) = %q, want %q", tt.mime, len(tt.data), got, tt.want)
		}
	}
}

// replies is a Model that plays its responses in order and keeps the
// requests it was sent.
type replies struct {
	resps []*engine.Response
	reqs  []*engine.Request
}

func (r *replies) Name() string { return "replies" }
func (r *replies) Stream(_ context.Context, req *engine.Request, _ func(engine.Delta) error) (*engine.Response, error) {
	r.reqs = append(r.reqs, req)
	resp := r.resps[0]
	r.resps = r.resps[1:]
	return resp, nil
}

func call(name, args string) *engine.Response {
	return &engine.Response{ToolCalls: []engine.ToolCall{{ID: "c", Name: name, Arguments: json.RawMessage(args)}}}
}

// Every stage's task message of the turn carries the prompt's images; the
// session's later turns read a note in their place.
func TestRun_images(t *testing.T) {
	turn := newTurn(t, twoStages, "")
	m := &replies{resps: []*engine.Response{call("transition", `{"to":"report"}`), call("submit_output", `{"content":"A cat."}`)}}
	turn.Models, turn.UserModel = models{"m": m}, "m"
	turn.Prompt = "What is in the picture?"
	turn.Images = []engine.Image{{MIMEType: "image/png", Data: png}}
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
