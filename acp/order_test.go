package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/internal/jsonrpc"
)

// untilCancelled answers no call until the turn is cancelled.
type untilCancelled struct{}

func (untilCancelled) Name() string { return "until-cancelled" }
func (untilCancelled) Stream(ctx context.Context, _ *llm.Request, _ func(llm.Delta) error) (*llm.Response, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

type untilCancelledModels struct{}

func (untilCancelledModels) Model(string) (llm.Model, error) { return untilCancelled{}, nil }

// A $/cancel_request read while its prompt, held behind an option change
// (order.go), is being taken from the queue but is not yet running still
// cancels it: it waits behind the prompt, as it would on the read loop,
// rather than being handled at once and finding no prompt to cancel.
func TestUnhold_cancelRequestWhileStarting(t *testing.T) {
	srv := testServer(t, t.TempDir(), Options{})
	id := handle(t, srv, (*Server).newSession, fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, t.TempDir())).SessionID
	srv.opts.Engine.Models = untilCancelledModels{}
	sess := srv.sessions[id]

	// The option change is answered; the prompt read meanwhile is queued.
	params := json.RawMessage(fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"hi"}]}`, id))
	srv.order.Open(id)
	srv.order.Hold(id, jsonrpc.Held{ID: json.RawMessage("7"), Method: "session/prompt", Params: params, Names: jsonrpc.KeyOf(json.RawMessage("7"))})

	// The queue's prompt is taken up, and held just before it registers.
	sess.mu.Lock()
	unheld := make(chan struct{})
	go func() {
		defer close(unheld)
		srv.unhold(context.Background(), id)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for !inStack("acp.(*Server).prompt(") {
		if time.Now().After(deadline) {
			sess.mu.Unlock()
			t.Fatal("the queued prompt was never handled")
		}
		runtime.Gosched() // a poll, with a hang detector: the stack is the event
	}
	// The read loop reads the client's cancel of that prompt.
	srv.serve(context.Background(), nil, "$/cancel_request", json.RawMessage(`{"requestId":7}`))
	sess.mu.Unlock()

	<-unheld
	done := make(chan struct{})
	go func() { srv.conn.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the prompt cancelled by $/cancel_request as it started ran on")
	}
}

// inStack reports whether a goroutine is in fn.
func inStack(fn string) bool {
	buf := make([]byte, 1<<20)
	return strings.Contains(string(buf[:runtime.Stack(buf, true)]), fn)
}

// A session's queue holds what coda allows, not what arrives: past
// jsonrpc.MaxHeld messages or MaxHeldBytes of params a request is refused at once
// with its reason, and cancels, always held, are held once in a row (the
// session's) or once per prompt they name ($/cancel_request).
func TestHold_bounded(t *testing.T) {
	srv := testServer(t, t.TempDir(), Options{})
	srv.order.Open("s1")
	params := json.RawMessage(`{"sessionId":"s1","prompt":[]}`)
	for i := range jsonrpc.MaxHeld {
		if held, _, refused := srv.hold(json.RawMessage(fmt.Sprint(i)), "session/prompt", params); !held || refused != nil {
			t.Fatalf("message %d: held %v, refused %v", i, held, refused)
		}
	}
	held, _, refused := srv.hold(json.RawMessage("9999"), "session/prompt", params)
	if held || refused == nil || !strings.Contains(refused.Error(), "send this again once it has answered") {
		t.Fatalf("past MaxHeld: held %v, refused %v", held, refused)
	}
	// Cancels are held past the bound, once.
	for range 3 {
		if held, now, refused := srv.hold(nil, "session/cancel", json.RawMessage(`{"sessionId":"s1"}`)); !held || !now || refused != nil {
			t.Fatalf("session/cancel: held %v, now %v, refused %v", held, now, refused)
		}
	}
	for range 3 {
		if held, _, _ := srv.hold(nil, "$/cancel_request", json.RawMessage(`{"requestId":5}`)); !held {
			t.Fatal("$/cancel_request for a queued prompt not held")
		}
	}
	var cancels []string
	srv.order.Drain("s1", func(m jsonrpc.Held) {
		if m.Method != "session/prompt" {
			cancels = append(cancels, m.Method)
		}
	})
	if want := []string{"session/cancel", "$/cancel_request"}; !slices.Equal(cancels, want) {
		t.Errorf("cancels held %q, want %q: one of each", cancels, want)
	}

	// Bytes: one large request fits, the next that would pass the bound
	// does not.
	srv.order.Open("s2")
	big := json.RawMessage(`{"sessionId":"s2","prompt":[{"type":"text","text":"` + strings.Repeat("x", jsonrpc.MaxHeldBytes/2) + `"}]}`)
	if held, _, refused := srv.hold(json.RawMessage("1"), "session/prompt", big); !held || refused != nil {
		t.Fatalf("first large prompt: held %v, refused %v", held, refused)
	}
	if held, _, refused := srv.hold(json.RawMessage("2"), "session/prompt", big); held || refused == nil {
		t.Fatalf("second large prompt: held %v, refused %v; want refused", held, refused)
	}
}
