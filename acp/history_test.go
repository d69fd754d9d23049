package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/blueprint"
	"github.com/coda-acp/coda/engine/llm"
	statestore "github.com/coda-acp/coda/store"
)

// answerModel answers every call at once.
type answerModel struct{}

func (answerModel) Name() string { return "answer" }
func (answerModel) Stream(context.Context, *llm.Request, func(llm.Delta) error) (*llm.Response, error) {
	return &llm.Response{StopReason: llm.StopToolUse, ToolCalls: []llm.ToolCall{
		{ID: "s", Name: blueprint.ToolSubmitOutput, Arguments: json.RawMessage(`{"content":"ok"}`)},
	}}, nil
}

type answerModels struct{}

func (answerModels) Model(string) (llm.Model, error) { return answerModel{}, nil }

// A long session keeps only what its next turn can use: after 100 turns of
// 1 MiB prompts, its history holds the latest 20 exchanges, clipped, not
// 100 MiB; and the heap, after a collection, shows no more than that. Its
// file, which keeps every prompt for session/load, is saved after each turn
// without being read whole: a late turn allocates no more than an early one
// (reading the file whole took coda to 900 MB by the hundredth turn).
func TestSession_historyBounded(t *testing.T) {
	if raceEnabled {
		t.Skip("100 MiB of prompts through encoding/json take minutes under the race detector")
	}
	agent, err := blueprint.Parse([]byte("[agent]\nname = \"t\"\n[stages.answer]\nmode = \"output\"\n"), "test")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := NewServer(Options{Agent: agent, UserModel: "answer", Engine: &engine.Engine{Models: answerModels{}, Store: statestore.New(t.TempDir())}})
	if err != nil {
		t.Fatal(err)
	}
	// The turns are driven through the method table directly: the wire's
	// JSON passes over each 1 MiB line would only slow the test (and are
	// the line reader's business, tested on their own).
	srv.conn = srv.newConn(strings.NewReader(""), io.Discard)
	defer srv.conn.Close()
	sessionID := handle(t, srv, (*Server).newSession, fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, t.TempDir())).SessionID
	sess := srv.sessions[sessionID]

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	prompt := strings.Repeat("a", 1<<20)
	allocs := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	allocated := func() uint64 { metrics.Read(allocs); return allocs[0].Value.Uint64() }
	var mark, early uint64 // early: what turns 10-19 allocated
	for i := range 100 {
		switch i {
		case 10, 90:
			mark = allocated()
		case 20:
			early = allocated() - mark
		}
		handle(t, srv, (*Server).prompt, fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"%d %s"}]}`, sessionID, i, prompt))
		srv.conn.Wait() // until the turn has answered, its file saved
	}

	late := allocated() - mark // what turns 90-99 allocated
	t.Logf("turns 10-19 allocated %d MiB, turns 90-99 %d MiB", early>>20, late>>20)
	if late > 2*early {
		t.Errorf("turns 90-99 allocated %d MiB, turns 10-19 %d MiB: a turn's cost grows with the session", late>>20, early>>20)
	}

	sess.mu.Lock()
	retained, turns := 0, len(sess.history)
	for _, ex := range sess.history {
		retained += len(ex.Prompt) + len(ex.Answer)
	}
	oldest := sess.history[0].Prompt[:3]
	sess.mu.Unlock()
	if turns != 20 || oldest != "80 " {
		t.Errorf("the session keeps %d turns from %q on, want the latest 20 (from turn 80)", turns, oldest)
	}
	if limit := 20 * 2 * (8 << 10); retained > limit {
		t.Errorf("the session keeps %d bytes of history, want at most %d", retained, limit)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	grown := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("history: %d turns, %d bytes; heap grew %d bytes over 100 turns of 1 MiB prompts", turns, retained, grown)
	if grown > 32<<20 {
		t.Errorf("the heap grew %d MiB over the session, want well under the 100 MiB of prompts", grown>>20)
	}
	runtime.KeepAlive(srv)
}

// A session's history counts the exchanges it no longer keeps, live and
// when restored from its file (which reads them one at a time, keeping as
// it goes), so that the next turn can say how many it does not show and
// what the first of them asked. 45 turns keep the latest 15: the history
// is cut 10 at a time once it passes 20 (engine.KeepHistory).
func TestSession_historyCountsCuts(t *testing.T) {
	state := t.TempDir()
	srv := testServer(t, state, Options{})
	id := handle(t, srv, (*Server).newSession, fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, t.TempDir())).SessionID
	for i := range 45 {
		promptAndWait(t, srv, id, fmt.Sprintf("turn %d", i))
	}
	check := func(how string, sess *session) {
		t.Helper()
		sess.mu.Lock()
		defer sess.mu.Unlock()
		if h := sess.history; len(h) != 15 || h[0].NotShown != 30 || h[0].FirstNotShown != "turn 0" {
			t.Errorf("%s: %d exchanges, the first counting %d not shown from %q; want 15, 30, \"turn 0\"", how, len(h), h[0].NotShown, h[0].FirstNotShown)
		}
	}
	check("live", srv.sessions[id])
	f, _ := readKept(t, srv, id)
	again := testServer(t, state, Options{})
	handle(t, again, ofLoader((*loader).resumeSession), fmt.Sprintf(`{"sessionId":%q,"cwd":%q,"mcpServers":[]}`, id, f.Cwd))
	check("restored", again.sessions[id])
}
