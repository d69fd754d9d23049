package engine_test

import (
	"bytes"
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/llm"
)

// uploader is a model that uploads each image of its requests, as a
// provider with a files API does, and notes what happens, in order.
type uploader struct {
	llm.Model
	mu      sync.Mutex
	log     []string
	release func(ctx context.Context) error // nil: note it, and succeed
	onCall  func(n int)
	calls   int
}

func (u *uploader) note(s string) {
	u.mu.Lock()
	u.log = append(u.log, s)
	u.mu.Unlock()
}

func (u *uploader) Stream(ctx context.Context, req *llm.Request, onDelta func(llm.Delta) error) (*llm.Response, error) {
	for _, m := range req.Messages {
		for _, im := range m.Images {
			_, err := im.Uploaded("fake", func() (string, func(context.Context) error, error) {
				u.note("upload")
				return "file-1", func(ctx context.Context) error {
					if ctx.Err() != nil {
						u.note("release with its context done")
					}
					u.note("release")
					if u.release != nil {
						return u.release(ctx)
					}
					return nil
				}, nil
			})
			if err != nil {
				return nil, err
			}
		}
	}
	u.mu.Lock()
	u.calls++
	n := u.calls
	u.mu.Unlock()
	if u.onCall != nil {
		u.onCall(n)
	}
	return u.Model.Stream(ctx, req, onDelta)
}

// A four-call turn whose prompt has an image.
const lookTurns = `
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
`

const lookAgent = `
[agent]
name = "look"
[stages.answer]
mode = "output"
available_tools = ["list_files"]
`

func imageTurn(t *testing.T) (*testTurn, *uploader) {
	turn := newTurn(t, lookAgent, lookTurns)
	turn.Engine.Tools = builtinTools()
	u := &uploader{Model: turn.Models.(oneModel).m}
	turn.Models = oneModel{u}
	turn.Images = []llm.Image{{MIMEType: "image/png", Data: append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{1}, 1<<20)...)}}
	return turn, u
}

// A turn's image is uploaded at its first call, and what the upload left
// is released once, when the turn is over: not before Run returns (the
// prompt's response waits for no delete), but with the record
// (Result.Recorded), once however often that is called.
func TestRun_imageReleasedAtTurnEnd(t *testing.T) {
	turn, u := imageTurn(t)
	sink := &events{on: func(ev engine.Event) {
		if ev.Kind == engine.EventFinalAnswer {
			u.note("answer")
		}
	}}
	res := turn.Engine.Run(context.Background(), turn.Turn, sink)
	if res.Answer == nil {
		t.Fatalf("Run = %s (%v)", res.Status, res.Err)
	}
	if want := []string{"upload", "answer"}; !slices.Equal(u.log, want) {
		t.Errorf("when Run returned: %q, want %q", u.log, want)
	}
	res.Recorded()
	res.Recorded()
	want := []string{"upload", "answer", "release"}
	if u.calls != 4 || !slices.Equal(u.log, want) {
		t.Errorf("%d calls, %q; want 4 calls, %q", u.calls, u.log, want)
	}
}

// A cancelled turn's uploads are released too, under a context of their
// own: the turn's is done.
func TestRun_imageReleasedWhenCancelled(t *testing.T) {
	turn, u := imageTurn(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	u.onCall = func(n int) {
		if n == 3 {
			cancel()
		}
	}
	res := runTurn(ctx, turn, &events{})
	if res.Status != engine.StatusCancelled {
		t.Fatalf("Run = %s (%v), want cancelled", res.Status, res.Err)
	}
	if want := []string{"upload", "release"}; !slices.Equal(u.log, want) {
		t.Errorf("%q, want %q", u.log, want)
	}
}

// A deletion that hangs holds the turn's end (Recorded) ReleaseTimeout, no
// longer: then its context ends, and Recorded returns. (Time here is synctest's: exact.)
func TestRun_imageReleaseBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		turn, u := imageTurn(t)
		var began, ended time.Time
		u.release = func(ctx context.Context) error {
			began = time.Now()
			<-ctx.Done()
			ended = time.Now()
			return ctx.Err()
		}
		if res := runTurn(context.Background(), turn, &events{}); res.Answer == nil {
			t.Fatalf("Run = %s (%v)", res.Status, res.Err)
		}
		if began.IsZero() {
			t.Fatalf("%q: the release did not run", u.log)
		}
		if held, after := ended.Sub(began), time.Since(ended); held != engine.ReleaseTimeout || after != 0 {
			t.Errorf("the release was held %s and the turn ended %s after; want %s and at once", held, after, engine.ReleaseTimeout)
		}
	})
}
