package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coda-acp/coda/acp/acptest"
	"github.com/coda-acp/coda/acp/editor"
	"github.com/coda-acp/coda/acp/pickers"
	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/blueprint"
	"github.com/coda-acp/coda/internal/jsonrpc"
	statestore "github.com/coda-acp/coda/store"
)

func TestCheckSessionID(t *testing.T) {
	for _, id := range []string{"s-1", "s-0a1b2c3d4e5f", "A_b.c-9", strings.Repeat("x", 128)} {
		if err := checkSessionID(id); err != nil {
			t.Errorf("checkSessionID(%q) = %v, want nil", id, err)
		}
	}
	for _, id := range []string{"", "../s-1", "s/1", `s\1`, "..", "a..b", ".hidden", "s-1\x00", "s 1", "é", strings.Repeat("x", 129)} {
		if err := checkSessionID(id); !errors.Is(err, ErrInvalidParams) {
			t.Errorf("checkSessionID(%q) = %v, want invalid params", id, err)
		}
	}
	// A long id is shown cut, and never inside a character.
	err := checkSessionID(strings.Repeat("a", 39) + strings.Repeat("é", 40))
	if want := `sessionId "` + strings.Repeat("a", 39) + `…" is not`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("checkSessionID(a long id) = %v, want it shown as %s", err, want)
	}
}

func TestParseCommand(t *testing.T) {
	tests := []struct {
		text, name, arg string
		ok              bool
	}{
		{"/format json", "format", "json", true},
		{"  /mode\tauto-edit ", "mode", "auto-edit", true},
		{"/model", "model", "", true},
		{"/model  openai:gpt-5.1\n", "model", "openai:gpt-5.1", true},
		{"/etc/hosts is empty", "", "", false},
		{"/formats json", "", "", false},
		{"format json", "", "", false},
	}
	for _, tt := range tests {
		name, arg, ok := parseCommand([]contentBlock{{Type: "text", Text: tt.text}})
		if name != tt.name || arg != tt.arg || ok != tt.ok {
			t.Errorf("parseCommand(%q) = %q, %q, %v; want %q, %q, %v", tt.text, name, arg, ok, tt.name, tt.arg, tt.ok)
		}
	}
	if _, _, ok := parseCommand([]contentBlock{{Type: "text", Text: "/mode ask"}, {Type: "text", Text: "more"}}); ok {
		t.Error("a prompt of two blocks is not a command")
	}
}

func TestInside(t *testing.T) {
	roots := []string{"/w", "/lib"}
	tests := []struct {
		paths []string
		want  bool
	}{
		{[]string{"/w/a.txt"}, true},
		{[]string{"/w/sub/b.txt", "/lib/c.go"}, true},
		{[]string{"/w/../etc/passwd"}, false},
		{[]string{"/wx/a.txt"}, false},
		{[]string{"/w/a.txt", "/tmp/b"}, false},
		{[]string{"a.txt"}, false},
		{nil, false},
	}
	for _, tt := range tests {
		var locs []engine.Location
		for _, p := range tt.paths {
			locs = append(locs, engine.Location{Path: p})
		}
		if got := pickers.Inside(roots, locs); got != tt.want {
			t.Errorf("inside(%v) = %v, want %v", tt.paths, got, tt.want)
		}
	}
}

// auto-edit answers for edits inside the workspace only: never for one
// outside it or of unknown place (an MCP tool's), another kind, or a taint
// question, whatever it shows.
func TestBindMode_autoEdit(t *testing.T) {
	srv := testServer(t, t.TempDir(), Options{})
	work := t.TempDir()
	id := handle(t, srv, (*Server).newSession, fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, work)).SessionID
	sess := srv.sessions[id]
	w := sess.ws.(*editor.Workspace)
	in, out := []engine.Location{{Path: filepath.Join(work, "a.txt")}}, []engine.Location{{Path: "/etc/hosts"}}
	tests := []struct {
		mode, key, kind string
		locs            []engine.Location
		want            bool
	}{
		{modeAutoEdit, "edit_file", "edit", in, true},
		{modeAutoEdit, "edit_file", "edit", out, false},
		{modeAutoEdit, "test__fail", "edit", nil, false},
		{modeAutoEdit, "shell", "execute", in, false},
		{modeAutoEdit, "taint:edit_file", "edit", in, false},
		{modeAsk, "edit_file", "edit", in, false},
	}
	for _, tt := range tests {
		sess.mode = tt.mode
		req := engine.PermissionRequest{Key: tt.key, ToolCall: engine.ToolCallEvent{Kind: tt.kind, Locations: tt.locs}}
		if got := w.AutoApprove(req); got != tt.want {
			t.Errorf("%s, %s (%s) at %v: answered %v, want %v", tt.mode, tt.key, tt.kind, tt.locs, got, tt.want)
		}
	}
}

// testServer is a server over state whose turns answer at once, driven
// through the method table.
func testServer(t testing.TB, state string, opts Options) *Server {
	t.Helper()
	agent, err := blueprint.Parse([]byte("[agent]\nname = \"t\"\n[stages.answer]\nmode = \"output\"\navailable_tools = [\"read_file\", \"write_file\", \"shell\"]\n"), "test")
	if err != nil {
		t.Fatal(err)
	}
	opts.Agent = agent
	if opts.Engine == nil {
		opts.Engine = &engine.Engine{}
	}
	opts.Engine.Models, opts.Engine.Store = answerModels{}, statestore.New(state)
	if opts.UserModel == "" {
		opts.UserModel = "answer:model"
	}
	srv, err := NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv.conn = srv.newConn(strings.NewReader(""), io.Discard)
	t.Cleanup(func() { srv.conn.Close() })
	return srv
}

// handle runs a handler as the method table does: params decoded and
// checked, what follows the answer sent. It returns the result; for a
// request the handler keeps (a prompt, a load, a list), once it is
// answered.
func handle[P, R any](t testing.TB, srv *Server, h func(*Server, context.Context, *request[R], *P) (*R, error), params string) *R {
	t.Helper()
	res, err := tryHandle(srv, h, params)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// tryHandle is handle, returning the handler's error.
func tryHandle[P, R any](srv *Server, h func(*Server, context.Context, *request[R], *P) (*R, error), params string) (*R, error) {
	p, err := jsonrpc.Params[P]("test", json.RawMessage(params))
	if err != nil {
		return nil, err
	}
	type answered struct {
		res *R
		err error
	}
	got := make(chan answered, 1)
	r := jsonrpc.NewRequest[R](srv.conn.Loop(), "test", json.RawMessage("0"))
	r.Got = func(res *R, err error) { got <- answered{res, err} }
	res, err := h(srv, context.Background(), r, p)
	if err != nil {
		return nil, err
	}
	if r.Kept() {
		a := <-got
		res, err = a.res, a.err
	}
	r.Answered()
	return res, err
}

// promptAndWait runs one turn through the method table.
func promptAndWait(t testing.TB, srv *Server, sessionID, text string) {
	t.Helper()
	handle(t, srv, (*Server).prompt, fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":%q}]}`, sessionID, text))
	// Until the turn's answer is written: the session's file is saved
	// before it. (The session is free again a little earlier.)
	srv.conn.Wait()
}

// The file keeps every exchange; a restored session's history, like a
// live one's, only what its next turn can use.
func TestRestore_historyBounded(t *testing.T) {
	state := t.TempDir()
	srv := testServer(t, state, Options{})
	id := handle(t, srv, (*Server).newSession, fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, t.TempDir())).SessionID
	for i := range 30 {
		promptAndWait(t, srv, id, fmt.Sprintf("turn %d", i))
	}
	f, n := readKept(t, srv, id)
	if n != 30 {
		t.Errorf("the file keeps %d exchanges, want 30", n)
	}

	again := testServer(t, state, Options{})
	handle(t, again, ofLoader((*loader).loadSession), fmt.Sprintf(`{"sessionId":%q,"cwd":%q,"mcpServers":[]}`, id, f.Cwd))
	sess := again.sessions[id]
	if len(sess.history) != 20 || sess.history[0].Prompt != "turn 10" || sess.history[19].Answer != "ok" {
		t.Errorf("restored history: %d exchanges from %q, want the latest 20 from \"turn 10\"", len(sess.history), sess.history[0].Prompt)
	}
}

// session/list pages through 120 sessions 50 at a time, newest first,
// each once, also when a session is saved between two pages.
func TestListSessions_pages(t *testing.T) {
	state := t.TempDir()
	srv := testServer(t, state, Options{})
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 120 {
		writeSession(t, state, fmt.Sprintf("s-%03d", i), "/w", 0, base.Add(time.Duration(i%60)*time.Minute))
	}
	seen := map[string]bool{}
	var last *statestore.SessionInfo
	cursor, pages := "", 0
	for {
		params := `{}`
		if cursor != "" {
			params = fmt.Sprintf(`{"cursor":%q}`, cursor)
		}
		resp := handle(t, srv, ofLoader((*loader).listSessions), params)
		pages++
		for _, info := range resp.Sessions {
			if seen[info.SessionID] {
				t.Errorf("%s listed twice", info.SessionID)
			}
			seen[info.SessionID] = true
			at, _ := time.Parse(time.RFC3339Nano, info.UpdatedAt)
			if last != nil && (at.After(last.UpdatedAt) || at.Equal(last.UpdatedAt) && info.SessionID < last.ID) {
				t.Errorf("%s (%s) listed after %s (%s)", info.SessionID, info.UpdatedAt, last.ID, last.UpdatedAt)
			}
			last = &statestore.SessionInfo{ID: info.SessionID, UpdatedAt: at}
		}
		if pages == 1 {
			// A session saved now is newer than the page read: it is not
			// on the next pages, and moves nothing on them.
			ss, err := srv.load.store.CreateSession(statestore.SessionState{ID: "s-new", Cwd: "/w"})
			if err != nil {
				t.Fatal(err)
			}
			ss.Append(statestore.SessionState{ID: "s-new", Cwd: "/w"}, &statestore.Exchange{})
		}
		if resp.NextCursor == "" {
			break
		}
		cursor = resp.NextCursor
	}
	if pages != 3 || len(seen) != 120 || seen["s-new"] {
		t.Errorf("%d pages, %d sessions (s-new listed: %v); want 3 pages of the 120", pages, len(seen), seen["s-new"])
	}
}

// A save that cannot write warns, and the session goes on.
func TestSaveSession_failing(t *testing.T) {
	blocked := t.TempDir()
	os.WriteFile(filepath.Join(blocked, "sessions"), []byte("a file where the directory goes"), 0o600)
	srv := testServer(t, blocked, Options{})
	resp := handle(t, srv, (*Server).newSession, fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, t.TempDir()))
	warnings, _ := json.Marshal(resp.Meta)
	if !strings.Contains(string(warnings), "could not be saved") {
		t.Errorf("session/new _meta = %s, want the save's warning", warnings)
	}
	promptAndWait(t, srv, resp.SessionID, "still usable")
}

// A turn in a session whose file is full (MaxSessionBytes) answers, saying
// the turn is not saved and why; the session still loads, as it was.
func TestSaveSession_full(t *testing.T) {
	state, cwd := t.TempDir(), t.TempDir()
	srv := testServer(t, state, Options{})
	id := handle(t, srv, (*Server).newSession, fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, cwd)).SessionID
	promptAndWait(t, srv, id, "turn 0")
	fi, err := os.Stat(sessionFile(srv.load.store, id))
	if err != nil {
		t.Fatal(err)
	}
	srv.load.store.MaxSessionBytes = fi.Size() + 10
	res := handle(t, srv, (*Server).prompt, fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"turn 1"}]}`, id))
	srv.conn.Wait()
	full := 0
	for _, w := range res.Meta.Coda.Warnings {
		if strings.Contains(w, "is full") && strings.Contains(w, "start a new session") {
			full++
		}
	}
	if res.StopReason != "end_turn" || full != 1 {
		t.Errorf("the turn in a full session: %s, warnings %q; want one saying it is full", res.StopReason, res.Meta.Coda.Warnings)
	}
	if got := replayed(t, state, id, cwd); strings.Join(got, ",") != "turn 0" {
		t.Errorf("the session loads with %q, want the turn saved before it was full", got)
	}
}

// A session deleted while its turn runs is not written again when the
// turn ends.
func TestDeleteSession_duringTurn(t *testing.T) {
	srv := testServer(t, t.TempDir(), Options{})
	id := handle(t, srv, (*Server).newSession, fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, t.TempDir())).SessionID
	sess := srv.sessions[id]
	// The turn's save, coming after the delete, finds the session gone.
	handle(t, srv, ofLoader((*loader).deleteSession), fmt.Sprintf(`{"sessionId":%q}`, id))
	if w := srv.load.saveTurn(sess, nil, "r-1", engine.Exchange{Prompt: "p", Answer: "a"}, nil, nil, engine.StatusAnswered, false); w != "" {
		t.Fatal(w)
	}
	if _, err := os.Stat(sessionFile(srv.load.store, id)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the deleted session's file is back: %v", err)
	}
}

// A session restored by another process keeps its session/new output
// level and its option values.
func TestRestore_levelsAndOptions(t *testing.T) {
	state, cwd := t.TempDir(), t.TempDir()
	srv := testServer(t, state, Options{Models: &acptest.Models{PickerModels: []string{"answer:other"}}})
	id := handle(t, srv, (*Server).newSession, fmt.Sprintf(`{"cwd":%q,"mcpServers":[],"_meta":{"coda":{"output":{"format":"json","instructions":"Keys sorted."}}}}`, cwd)).SessionID
	sess := srv.sessions[id]
	for option, value := range map[string]string{optionModel: "answer:other", optionMode: modeAutoEdit} {
		if _, err := srv.setOption(sess, option, value); err != nil {
			t.Fatal(err)
		}
	}
	srv.load.saveSession(sess, nil)

	again := testServer(t, state, Options{Models: &acptest.Models{PickerModels: []string{"answer:other"}}})
	handle(t, again, ofLoader((*loader).loadSession), fmt.Sprintf(`{"sessionId":%q,"cwd":%q,"mcpServers":[]}`, id, cwd))
	got := again.sessions[id]
	if got.meta == nil || got.meta.Spec.Instructions != "Keys sorted." || got.outputs.Lead(again.opts.Agent).Format() != "json" {
		t.Errorf("restored output level %+v, format %s", got.meta, got.outputs.Lead(again.opts.Agent).Format())
	}
	if got.model != "answer:other" || got.mode != modeAutoEdit || again.pick.UserModel(got.picks()) != "answer:other" {
		t.Errorf("restored model %q, mode %q", got.model, got.mode)
	}
}

// readKept loads a session's file as another process would: its state,
// and how many exchanges it keeps.
func readKept(t testing.TB, srv *Server, id string) (statestore.SessionState, int) {
	t.Helper()
	n := 0
	l, err := srv.load.store.LoadSession(id, func(*statestore.Exchange) { n++ })
	if err != nil {
		t.Fatal(err)
	}
	return l.State, n
}

// writeSession writes a session's file in state as coda writes one, with
// turns exchanges of a few lines' prompt and a 1.5 KiB closing answer, the
// last at updated.
func writeSession(t testing.TB, state, id, cwd string, turns int, updated time.Time) {
	t.Helper()
	answer := strings.Repeat("The config is parsed in cmd/coda/config.go, by loadConfig. ", 25)
	var b []byte
	line := func(v any) {
		enc, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		b = append(append(b, enc...), '\n')
	}
	line(map[string]any{"type": "session", "version": 2, "at": updated, "session": statestore.SessionState{
		ID: id, Cwd: cwd, Title: "Where is the config parsed?", CreatedAt: updated, Options: map[string]string{"mode": modeAsk}}})
	for i := range turns {
		closing := jsonrpc.AppendJSON(nil, map[string]any{
			"sessionUpdate": "agent_message_chunk", "messageId": fmt.Sprintf("m-%d", i),
			"content": map[string]any{"type": "text", "text": answer},
			"_meta": map[string]any{"coda": map[string]any{"phase": "final_answer", "format": "markdown", "stage": "answer",
				"runId": fmt.Sprintf("r-%d", i), "flags": []string{}, "truncated": false, "artifacts": []any{}}},
		})
		line(map[string]any{"type": "exchange", "at": updated, "exchange": statestore.Exchange{
			Prompt:  []statestore.PromptBlock{{Type: "text", Text: fmt.Sprintf("Question %d: where is the config parsed,\nand what does it check?", i)}},
			History: statestore.Said{Prompt: fmt.Sprintf("Question %d: where is the config parsed?", i), Answer: answer},
			RunID:   fmt.Sprintf("r-%d", i), Closing: []json.RawMessage{closing},
		}})
	}
	dir := filepath.Join(state, "sessions")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, id+".jsonl"), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// sessionFile is where the store keeps session id's file: a session coda
// created has the current layout.
func sessionFile(st *statestore.Store, id string) string {
	return filepath.Join(st.Dir(), "sessions", id+".jsonl")
}
