package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/coda-acp/coda/engine"
)

// untilCancelled answers no call until the turn is cancelled.
type untilCancelled struct{}

func (untilCancelled) Name() string { return "until-cancelled" }
func (untilCancelled) Stream(ctx context.Context, _ *engine.Request, _ func(engine.Delta) error) (*engine.Response, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

type untilCancelledModels struct{}

func (untilCancelledModels) Model(string) (engine.Model, error) { return untilCancelled{}, nil }

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
	srv.mu.Lock()
	srv.queues[id] = &sessionQueue{held: []heldMessage{{id: json.RawMessage("7"), method: "session/prompt", params: params, key: idKeyOf(json.RawMessage("7"))}}}
	srv.mu.Unlock()

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
		time.Sleep(time.Millisecond)
	}
	// The read loop reads the client's cancel of that prompt.
	srv.serve(nil, "$/cancel_request", json.RawMessage(`{"requestId":7}`))
	sess.mu.Unlock()

	<-unheld
	done := make(chan struct{})
	go func() { srv.conn.owed.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		srv.conn.cancelTurns()
		<-done
		t.Fatal("the prompt cancelled by $/cancel_request as it started ran on")
	}
}

// inStack reports whether a goroutine is in fn.
func inStack(fn string) bool {
	buf := make([]byte, 1<<20)
	return strings.Contains(string(buf[:runtime.Stack(buf, true)]), fn)
}
