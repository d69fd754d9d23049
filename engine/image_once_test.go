package engine_test

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"unsafe"

	"github.com/coda-acp/coda/engine/llm"
)

// imageSpy records where each call's image's base64 lives.
type imageSpy struct {
	llm.Model
	mu    sync.Mutex
	at    []*byte
	calls int
}

func (s *imageSpy) Stream(ctx context.Context, req *llm.Request, onDelta func(llm.Delta) error) (*llm.Response, error) {
	s.mu.Lock()
	for _, m := range req.Messages {
		for _, im := range m.Images {
			s.at = append(s.at, unsafe.StringData(im.Base64()))
		}
	}
	s.calls++
	s.mu.Unlock()
	return s.Model.Stream(ctx, req, onDelta)
}

// A prompt's image is encoded once for its turn: every model call of the
// turn (here 4) is given the same base64, not an encoding of its own.
func TestRun_imageEncodedOnce(t *testing.T) {
	turn := newTurn(t, `
[agent]
name = "look"
[stages.answer]
mode = "output"
available_tools = ["list_files"]
`, `
[[turn]]
[[turn.tool_calls]]
name = "list_files"
arguments = {}
[[turn]]
[[turn.tool_calls]]
name = "list_files"
arguments = {}
[[turn]]
[[turn.tool_calls]]
name = "list_files"
arguments = {}
[[turn]]
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "A square." }
`)
	turn.Engine.Tools = builtinTools()
	spy := &imageSpy{Model: turn.Models.(oneModel).m}
	turn.Models = oneModel{spy}
	turn.Images = []llm.Image{{MIMEType: "image/png", Data: append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{1}, 1<<20)...)}}
	if res := runTurn(context.Background(), turn, &events{}); res.Answer == nil {
		t.Fatalf("Run = %s (%v)", res.Status, res.Err)
	}
	if spy.calls != 4 || len(spy.at) != 4 {
		t.Fatalf("%d calls, %d images sent; want 4 and 4", spy.calls, len(spy.at))
	}
	for i, p := range spy.at[1:] {
		if p != spy.at[0] {
			t.Errorf("call %d encoded the image again", i+2)
		}
	}
}
