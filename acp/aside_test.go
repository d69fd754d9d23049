//go:build unix

package acp_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coda-acp/coda/acp"
	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/blueprint"
	"github.com/coda-acp/coda/store"
)

// bigSession writes a session of turns exchanges in state, as coda writes
// them, and returns its id.
func bigSession(t *testing.T, state, cwd string, turns int) string {
	t.Helper()
	st := store.New(state)
	s := store.SessionState{ID: "s-big", Cwd: cwd}
	ss, err := st.CreateSession(s)
	if err != nil {
		t.Fatal(err)
	}
	answer := strings.Repeat("a long answer ", 1000)
	for i := range turns {
		ex := &store.Exchange{Prompt: []store.PromptBlock{{Type: "text", Text: fmt.Sprintf("question %d", i)}}, History: store.Said{Prompt: "q", Answer: answer}}
		if err := ss.Append(s, ex); err != nil {
			t.Fatal(err)
		}
	}
	return s.ID
}

// A load reads its session's file off the read loop: while one is held in
// the middle of reading a large session, a cancel in another session
// answers that session's prompt, and a prompt in a third is answered; the
// load then answers, after all it replays (issue 23: a cancel waited 3.85 s
// behind a 300 MiB load, which held the read loop).
func TestLoad_besideOtherSessions(t *testing.T) {
	state := t.TempDir()
	st := store.New(state)
	m, held, release := heldServer(t, st)
	big := bigSession(t, state, m.work, 50)
	m.request(1, "session/new", map[string]any{"cwd": m.work, "mcpServers": []any{}})
	m.request(2, "session/new", map[string]any{"cwd": m.work, "mcpServers": []any{}})
	m.do(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s-1","prompt":[{"type":"text","text":"go on"}]}}`)
	m.await(`"plan"`)
	m.do(fmt.Sprintf(`{"jsonrpc":"2.0","id":4,"method":"session/load","params":{"sessionId":%q,"cwd":%q,"mcpServers":[]}}`, big, m.work))
	othersGoOn(t, m, held)
	// A request naming the session being loaded waits for nothing either:
	// it is refused.
	m.do(fmt.Sprintf(`{"jsonrpc":"2.0","id":6,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"too soon"}]}}`, big))
	if got := m.answer(6); !strings.Contains(got, "is being loaded") {
		t.Errorf("a prompt in the session being loaded: %s", got)
	}
	lines, _ := m.lines()
	for _, l := range lines {
		if strings.Contains(l, `"id":4,`) {
			t.Fatalf("the load answered while it was held: %s", l)
		}
	}
	close(release)
	if got := m.answer(4); !strings.Contains(got, `"result"`) {
		t.Fatalf("the load: %s", got)
	}
	lines, _ = m.lines()
	replayed, answered := 0, false
	for _, l := range lines {
		switch {
		case strings.Contains(l, `"id":4,`):
			answered = true
		case strings.Contains(l, `"sessionId":"s-big"`) && strings.Contains(l, "user_message_chunk"):
			if answered {
				t.Errorf("replayed after the load's answer: %.100s", l)
			}
			replayed++
		}
	}
	if replayed != 50 {
		t.Errorf("the load replayed %d prompts, want 50", replayed)
	}
}

// othersGoOn checks, once held is closed (a load, resume or list held in
// the middle of its reading), that a cancel in session s-1, whose prompt
// (id 3) streams, answers that prompt, and that a prompt in s-2 (id 5) is
// answered. Each wait has its own hang detector: a minute, never a
// deadline a loaded machine could miss.
func othersGoOn(t *testing.T, m *liveConn, held <-chan struct{}) {
	t.Helper()
	select {
	case <-held:
	case <-time.After(time.Minute): // a hang detector, not a deadline
		t.Fatal("the request never began to read its session's file")
	}
	m.do(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s-1"}}`)
	if got := m.answer(3); !strings.Contains(got, `"stopReason":"cancelled"`) {
		t.Errorf("the prompt in s-1: %s, want it cancelled", got)
	}
	m.do(`{"jsonrpc":"2.0","id":5,"method":"session/prompt","params":{"sessionId":"s-2","prompt":[{"type":"text","text":"now"}]}}`)
	if got := m.answer(5); !strings.Contains(got, `"stopReason":"end_turn"`) {
		t.Errorf("the prompt in s-2: %s", got)
	}
}

// heldServer serves the test's agent on state with s-1 streaming for ever
// (its prompt, id 3, sent) and s-2 free, reading through st, whose reads of
// a file of session s-big are held until release is closed; held is
// closed at the first.
func heldServer(t *testing.T, st *store.Store) (m *liveConn, held, release chan struct{}) {
	held, release = make(chan struct{}), make(chan struct{})
	var once sync.Once
	st.BeforeRead = func(path string) {
		if strings.Contains(path, "s-big") {
			once.Do(func() { close(held) })
			<-release
		}
	}
	m = serveLive(t, "[[turn]]\ndelay_ms = 600000\ntext = [\"streaming for ever\"]\n[[turn]]\ntext = [\"at once\"]\n",
		acp.Options{Agent: testAgent(t), Engine: &engine.Engine{Store: st}})
	return m, held, release
}

// A resume reads its session's file off the read loop, as a load does:
// while one is held in the middle of it, a cancel and a prompt in other
// sessions are answered; the resume then answers.
func TestResume_besideOtherSessions(t *testing.T) {
	state := t.TempDir()
	st := store.New(state)
	m, held, release := heldServer(t, st)
	big := bigSession(t, state, m.work, 50)
	m.request(1, "session/new", map[string]any{"cwd": m.work, "mcpServers": []any{}})
	m.request(2, "session/new", map[string]any{"cwd": m.work, "mcpServers": []any{}})
	m.do(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s-1","prompt":[{"type":"text","text":"go on"}]}}`)
	m.await(`"plan"`)
	m.do(fmt.Sprintf(`{"jsonrpc":"2.0","id":4,"method":"session/resume","params":{"sessionId":%q,"cwd":%q,"mcpServers":[]}}`, big, m.work))
	othersGoOn(t, m, held)
	if got := m.find(`"id":4,`); got != "" {
		t.Fatalf("the resume answered while it was held: %s", got)
	}
	close(release)
	if got := m.answer(4); !strings.Contains(got, `"result"`) {
		t.Fatalf("the resume: %s", got)
	}
}

// A listing reads, the first time, the session files its index does not
// know, off the read loop: while one is held in the middle of that, a
// cancel and a prompt in other sessions are answered; the listing then
// answers, with every session.
func TestList_besideOtherSessions(t *testing.T) {
	state := t.TempDir()
	st := store.New(state)
	m, held, release := heldServer(t, st)
	bigSession(t, state, m.work, 50)
	os.RemoveAll(filepath.Join(state, "index")) // s-big is a file the index does not know
	m.request(1, "session/new", map[string]any{"cwd": m.work, "mcpServers": []any{}})
	m.request(2, "session/new", map[string]any{"cwd": m.work, "mcpServers": []any{}})
	m.do(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s-1","prompt":[{"type":"text","text":"go on"}]}}`)
	m.await(`"plan"`)
	m.do(`{"jsonrpc":"2.0","id":4,"method":"session/list","params":{}}`)
	othersGoOn(t, m, held)
	if got := m.find(`"id":4,`); got != "" {
		t.Fatalf("the listing answered while it was held: %s", got)
	}
	close(release)
	if got := m.answer(4); strings.Count(got, `"sessionId"`) != 3 || !strings.Contains(got, `"s-big"`) {
		t.Fatalf("the listing: %s, want s-1, s-2 and s-big", got)
	}
}

// A FIFO where a session's file goes is refused at once by session/load,
// and skipped by session/list: opening it to read would wait for a writer,
// for ever (issue 23: it blocked the whole server); so is a link to a
// device. Each request waits a minute at most for its answer (await's
// hang detector): a load that waits on a FIFO fails the test, not hangs it.
func TestLoad_notARegularFile(t *testing.T) {
	state := t.TempDir()
	m := serveLive(t, "", acp.Options{Agent: testAgent(t), Engine: &engine.Engine{Store: store.New(state)}})
	dir := filepath.Join(state, "sessions")
	os.MkdirAll(dir, 0o755)
	if err := syscall.Mkfifo(filepath.Join(dir, "s-fifo.jsonl"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "s-oldfifo.json"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Symlink("/dev/zero", filepath.Join(dir, "s-dev.jsonl"))
	for i, id := range []string{"s-fifo", "s-oldfifo", "s-dev"} {
		got := m.request(10+i, "session/load", map[string]any{"sessionId": id, "cwd": m.work, "mcpServers": []any{}})
		if !strings.Contains(got, `"code":-32602`) || !(strings.Contains(got, "not a regular file") || strings.Contains(got, "leads out of the state directory")) {
			t.Errorf("loading %s: %s", id, got)
		}
	}
	if got := m.request(20, "session/list", map[string]any{}); !strings.Contains(got, `"sessions":[]`) {
		t.Errorf("session/list: %s", got)
	}
}

// testAgent is the default blueprint of the scripted sessions.
func testAgent(t *testing.T) *blueprint.Blueprint {
	t.Helper()
	agent, err := blueprint.Parse([]byte(defaultBlueprint), "test")
	if err != nil {
		t.Fatal(err)
	}
	return agent
}
