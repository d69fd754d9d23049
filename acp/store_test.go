package acp

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/blueprint"
	statestore "github.com/coda-acp/coda/store"
)

func TestCheckSessionID(t *testing.T) {
	for _, id := range []string{"s-1", "s-0a1b2c3d4e5f", "A_b.c-9", strings.Repeat("x", maxSessionID)} {
		if err := checkSessionID(id); err != nil {
			t.Errorf("checkSessionID(%q) = %v, want nil", id, err)
		}
	}
	for _, id := range []string{"", "../s-1", "s/1", `s\1`, "..", "a..b", ".hidden", "s-1\x00", "s 1", "é", strings.Repeat("x", maxSessionID+1)} {
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

// readHeader reads what list needs and stops at the exchanges: what comes
// after them is never read, however long (or broken) it is.
func TestReadHeader_stopsAtExchanges(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s-1.json")
	head := `{"version":1,"id":"s-1","cwd":"/w","title":"T","unknownField":{"a":[1,2]},"createdAt":"2024-01-01T00:00:00Z","updatedAt":"2024-02-01T00:00:00Z","output":{"format":"json"},"options":{"mode":"ask"},"exchanges":[`
	if err := os.WriteFile(path, []byte(head+"this is not JSON at all"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := readHeader(path, "s-1")
	if err != nil {
		t.Fatal(err)
	}
	if f.Cwd != "/w" || f.Title != "T" || !f.UpdatedAt.Equal(time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("header = %+v", f)
	}
	for name, content := range map[string]string{
		"not JSON":     "nope",
		"cut":          `{"version":1,"id":"s-1","cwd":"/w"`,
		"wrong id":     `{"version":1,"id":"s-2","cwd":"/w","exchanges":[]}`,
		"relative cwd": `{"version":1,"id":"s-1","cwd":"w","exchanges":[]}`,
		"version":      `{"version":2,"id":"s-1","cwd":"/w","exchanges":[]}`,
		"bad time":     `{"version":1,"id":"s-1","cwd":"/w","updatedAt":"yesterday","exchanges":[]}`,
	} {
		os.WriteFile(path, []byte(content), 0o600)
		if _, err := readHeader(path, "s-1"); !errors.Is(err, errCorrupt) {
			t.Errorf("%s: readHeader = %v, want a corrupt file", name, err)
		}
	}
}

// save replaces the file whole and leaves no temporary file behind.
func TestStore_saveAtomic(t *testing.T) {
	st := &store{dir: filepath.Join(t.TempDir(), "sessions")}
	for i := range 3 {
		f := &sessionFile{Version: sessionFileVersion, ID: "s-1", Cwd: "/w", Title: fmt.Sprint(i)}
		if corrupt, err := st.save(f, nil); corrupt != nil || err != nil {
			t.Fatal(corrupt, err)
		}
	}
	got, err := st.read("s-1")
	if err != nil || got.Title != "2" {
		t.Fatalf("read = %+v, %v; want the last save", got, err)
	}
	entries, _ := os.ReadDir(st.dir)
	if len(entries) != 1 {
		t.Errorf("the sessions directory holds %d entries, want the one file", len(entries))
	}
}

// save appends an exchange to a session's file, keeping the ones it has
// and the new header, without holding them: saving a 32-exchange, 8 MiB
// session allocates far less than one exchange, not several times the file
// (as reading it whole did: issue 9's 100 turns of 1 MiB prompts reached
// 900 MB).
func TestStore_saveStreams(t *testing.T) {
	st := &store{dir: filepath.Join(t.TempDir(), "sessions")}
	old := &sessionFile{Version: sessionFileVersion, ID: "s-1", Cwd: "/w", Title: "old"}
	for i := range 32 {
		ex := fmt.Sprintf(`{"prompt":[{"type":"text","text":"%d %s"}]}`, i, strings.Repeat("a", 256<<10))
		old.Exchanges = append(old.Exchanges, json.RawMessage(ex))
	}
	if err := st.write(old); err != nil {
		t.Fatal(err)
	}
	allocs := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(allocs)
	before := allocs[0].Value.Uint64()
	corrupt, err := st.save(&sessionFile{Version: sessionFileVersion, ID: "s-1", Cwd: "/w", Title: "new"}, json.RawMessage(`{"prompt":[{"type":"text","text":"last"}]}`))
	metrics.Read(allocs)
	used := allocs[0].Value.Uint64() - before
	if corrupt != nil || err != nil {
		t.Fatalf("save = %v, %v", corrupt, err)
	}
	if used > 256<<10 {
		t.Errorf("saving an 8 MiB session allocated %d KiB, want less than one of its 256 KiB exchanges", used>>10)
	}
	got, err := st.read("s-1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Title != "new" || len(got.Exchanges) != 33 || string(got.Exchanges[32]) != `{"prompt":[{"type":"text","text":"last"}]}` {
		t.Errorf("after the save: title %q, %d exchanges, the last %.60s", got.Title, len(got.Exchanges), got.Exchanges[len(got.Exchanges)-1])
	}
	for i, ex := range old.Exchanges {
		if string(got.Exchanges[i]) != string(ex) {
			t.Errorf("exchange %d changed: %.60s", i, got.Exchanges[i])
		}
	}

	// A file whose exchanges are cut off is set aside, and the new one
	// holds the new exchange alone; so is one whose exchanges are not an
	// array, or are not its end (a field after them: edited by hand).
	data, _ := os.ReadFile(st.path("s-1"))
	for name, bad := range map[string]string{
		"cut":          string(data[:len(data)/2]),
		"not an array": `{"version":1,"id":"s-1","cwd":"/w","exchanges":{}}`,
		"not the end":  `{"version":1,"id":"s-1","cwd":"/w","exchanges":[{"a":1}],"note":"x"}`,
	} {
		os.WriteFile(st.path("s-1"), []byte(bad), 0o600)
		corrupt, err = st.save(&sessionFile{Version: sessionFileVersion, ID: "s-1", Cwd: "/w"}, json.RawMessage(`{}`))
		if !errors.Is(corrupt, errCorrupt) || err != nil {
			t.Errorf("%s: save = %v, %v; want it set aside", name, corrupt, err)
		}
		if b, _ := os.ReadFile(st.path("s-1") + ".corrupt"); string(b) != bad {
			t.Errorf("%s: the file set aside holds %.60q", name, b)
		}
		if got, err := st.read("s-1"); err != nil || len(got.Exchanges) != 1 {
			t.Errorf("%s: then %v, %v; want the one new exchange", name, got, err)
		}
	}
	// An empty list, spaced as a person would, gets its first exchange.
	os.WriteFile(st.path("s-1"), []byte("{\"version\": 1, \"id\": \"s-1\", \"cwd\": \"/w\", \"exchanges\": [ ] }\n"), 0o600)
	if corrupt, err := st.save(&sessionFile{Version: sessionFileVersion, ID: "s-1", Cwd: "/w"}, json.RawMessage(`{"a":1}`)); corrupt != nil || err != nil {
		t.Fatalf("save = %v, %v", corrupt, err)
	}
	if got, err := st.read("s-1"); err != nil || len(got.Exchanges) != 1 || string(got.Exchanges[0]) != `{"a":1}` {
		t.Errorf("an empty list: then %v, %v", got, err)
	}
}

func TestTitleOf(t *testing.T) {
	long := strings.Repeat("word ", 30)
	tests := []struct {
		blocks []contentBlock
		want   string
	}{
		{[]contentBlock{{Type: "text", Text: "\n\n  Fix the login bug  \nin auth.go"}}, "Fix the login bug"},
		{[]contentBlock{{Type: "resource_link", Name: "main.go", URI: "file:///w/main.go"}, {Type: "text", Text: "why?"}}, "main.go"},
		{[]contentBlock{{Type: "text", Text: "   "}, {Type: "text", Text: "second"}}, "second"},
		{[]contentBlock{{Type: "text", Text: strings.Repeat("é", 200)}}, strings.Repeat("é", maxTitle-1) + "…"},
		{[]contentBlock{{Type: "text", Text: long}}, strings.TrimSpace(long[:75]) + "…"},
	}
	for _, tt := range tests {
		if got := titleOf(tt.blocks); got != tt.want {
			t.Errorf("titleOf(%v) = %q, want %q", tt.blocks, got, tt.want)
		}
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
		if got := inside(roots, locs); got != tt.want {
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
	w := sess.ws.(*clientWorkspace)
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
		if got := w.autoApprove(req); got != tt.want {
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
	srv.conn = newConn(srv.opts, strings.NewReader(""), io.Discard)
	t.Cleanup(func() { srv.conn.out.close() })
	return srv
}

// handle runs a handler as the method table does: params decoded and
// checked, what follows the answer sent. It returns the result; nil for a
// request the handler keeps to answer later.
func handle[P, R any](t testing.TB, srv *Server, h func(*Server, *request[R], *P) (*R, error), params string) *R {
	t.Helper()
	p, err := decodeParams[P](&method{name: "test"}, json.RawMessage(params), requiredFields(reflect.TypeFor[P]()))
	if err != nil {
		t.Fatal(err)
	}
	r := &request[R]{s: srv, method: "test", id: json.RawMessage("0")}
	res, err := h(srv, r, p)
	if err != nil {
		t.Fatal(err)
	}
	if r.after != nil {
		r.after()
	}
	return res
}

// promptAndWait runs one turn through the method table.
func promptAndWait(t testing.TB, srv *Server, sessionID, text string) {
	t.Helper()
	handle(t, srv, (*Server).prompt, fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":%q}]}`, sessionID, text))
	// Until the turn's answer is written: the session's file is saved
	// before it. (The session is free again a little earlier.)
	srv.conn.owed.Wait()
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
	f, err := srv.store.read(id)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Exchanges) != 30 {
		t.Errorf("the file keeps %d exchanges, want 30", len(f.Exchanges))
	}

	again := testServer(t, state, Options{})
	handle(t, again, (*Server).loadSession, fmt.Sprintf(`{"sessionId":%q,"cwd":%q,"mcpServers":[]}`, id, f.Cwd))
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
		f := &sessionFile{Version: sessionFileVersion, ID: fmt.Sprintf("s-%03d", i), Cwd: "/w", UpdatedAt: base.Add(time.Duration(i%60) * time.Minute), Exchanges: []json.RawMessage{}}
		if err := srv.store.write(f); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]bool{}
	var last *sessionInfo
	cursor, pages := "", 0
	for {
		params := `{}`
		if cursor != "" {
			params = fmt.Sprintf(`{"cursor":%q}`, cursor)
		}
		resp := handle(t, srv, (*Server).listSessions, params)
		pages++
		for _, info := range resp.Sessions {
			if seen[info.SessionID] {
				t.Errorf("%s listed twice", info.SessionID)
			}
			seen[info.SessionID] = true
			if last != nil && newestFirst(last, info) > 0 {
				t.Errorf("%s (%s) listed after %s (%s)", info.SessionID, info.UpdatedAt, last.SessionID, last.UpdatedAt)
			}
			last = info
		}
		if pages == 1 {
			// A session saved now is newer than the page read: it is not
			// on the next pages, and moves nothing on them.
			srv.store.write(&sessionFile{Version: sessionFileVersion, ID: "s-new", Cwd: "/w", UpdatedAt: base.Add(time.Hour), Exchanges: []json.RawMessage{}})
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

// A save that finds its file corrupt sets it aside and starts anew; one
// that cannot write warns, and the session goes on.
func TestSaveSession_corruptAndFailing(t *testing.T) {
	state := t.TempDir()
	srv := testServer(t, state, Options{})
	id := handle(t, srv, (*Server).newSession, fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, t.TempDir())).SessionID
	path := srv.store.path(id)
	os.WriteFile(path, []byte("garbage"), 0o600)
	promptAndWait(t, srv, id, "hello")
	if b, _ := os.ReadFile(path + ".corrupt"); string(b) != "garbage" {
		t.Errorf("the corrupt file was not set aside: %q", b)
	}
	if f, err := srv.store.read(id); err != nil || len(f.Exchanges) != 1 {
		t.Errorf("after the save: %v, %v; want a file with the one exchange", f, err)
	}

	blocked := t.TempDir()
	os.WriteFile(filepath.Join(blocked, "sessions"), []byte("a file where the directory goes"), 0o600)
	srv = testServer(t, blocked, Options{})
	resp := handle(t, srv, (*Server).newSession, fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, t.TempDir()))
	warnings, _ := json.Marshal(resp.Meta)
	if !strings.Contains(string(warnings), "could not be saved") {
		t.Errorf("session/new _meta = %s, want the save's warning", warnings)
	}
	promptAndWait(t, srv, resp.SessionID, "still usable")
}

// A session deleted while its turn runs is not written again when the
// turn ends.
func TestDeleteSession_duringTurn(t *testing.T) {
	srv := testServer(t, t.TempDir(), Options{})
	id := handle(t, srv, (*Server).newSession, fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, t.TempDir())).SessionID
	sess := srv.sessions[id]
	// The turn's save, coming after the delete, finds the session gone.
	handle(t, srv, (*Server).deleteSession, fmt.Sprintf(`{"sessionId":%q}`, id))
	if w := srv.saveTurn(sess, nil, "r-1", engine.Exchange{Prompt: "p", Answer: "a"}, nil, engine.StatusAnswered); w != "" {
		t.Fatal(w)
	}
	if _, err := os.Stat(srv.store.path(id)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the deleted session's file is back: %v", err)
	}
}

// A session restored by another process keeps its session/new output
// level and its option values.
func TestRestore_levelsAndOptions(t *testing.T) {
	state, cwd := t.TempDir(), t.TempDir()
	srv := testServer(t, state, Options{PickerModels: []string{"answer:other"}})
	id := handle(t, srv, (*Server).newSession, fmt.Sprintf(`{"cwd":%q,"mcpServers":[],"_meta":{"coda":{"output":{"format":"json","instructions":"Keys sorted."}}}}`, cwd)).SessionID
	sess := srv.sessions[id]
	for option, value := range map[string]string{optionModel: "answer:other", optionMode: modeAutoEdit} {
		if _, err := srv.setOption(sess, option, value); err != nil {
			t.Fatal(err)
		}
	}
	srv.saveSession(sess, nil)

	again := testServer(t, state, Options{PickerModels: []string{"answer:other"}})
	handle(t, again, (*Server).loadSession, fmt.Sprintf(`{"sessionId":%q,"cwd":%q,"mcpServers":[]}`, id, cwd))
	got := again.sessions[id]
	if got.meta == nil || got.meta.Spec.Instructions != "Keys sorted." || got.outputs.Lead(again.opts.Agent).Format() != "json" {
		t.Errorf("restored output level %+v, format %s", got.meta, got.outputs.Lead(again.opts.Agent).Format())
	}
	if got.model != "answer:other" || got.mode != modeAutoEdit || again.userModel(got) != "answer:other" {
		t.Errorf("restored model %q, mode %q", got.model, got.mode)
	}
}

// An image is replayed as a line naming it: its file, type and size.
func TestImageStandIn(t *testing.T) {
	for _, tt := range []struct {
		c    contentBlock
		want string
	}{
		{contentBlock{Type: "image", MimeType: "image/png", Data: "iVBORw0KGgo="}, "[image image/png, 8 bytes]"},
		{contentBlock{Type: "image", MimeType: "image/jpeg", Data: strings.Repeat("A", 4096), URI: "file:///home/me/shots/chart.jpg"}, "[image chart.jpg, image/jpeg, 3 KB]"},
	} {
		if got := imageStandIn(tt.c); got != tt.want {
			t.Errorf("imageStandIn = %q, want %q", got, tt.want)
		}
	}
}

// The tests read and write sessions' files whole: to look at what save
// wrote, and to make files as a session of any length would have them.

// read reads a session's whole file, its exchanges undecoded, checked as
// readAll checks it.
func (st *store) read(id string) (*sessionFile, error) {
	data, err := os.ReadFile(st.path(id))
	if err != nil {
		return nil, err
	}
	var f sessionFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%w: %v", errCorrupt, err)
	}
	if err := f.check(id); err != nil {
		return nil, err
	}
	return &f, nil
}

// write writes f whole, as save would have written it.
func (st *store) write(f *sessionFile) error {
	data, err := json.Marshal(f)
	if err != nil {
		return err
	}
	return st.replace(f.ID, true, func(w *bufio.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// eachExchange hands over a session's exchanges one at a time, in order,
// checking the whole file; a file that ends wrong or holds more is corrupt.
func TestStore_eachExchange(t *testing.T) {
	st := &store{dir: t.TempDir()}
	head := `{"version":1,"id":"s-1","cwd":"/w","options":{"mode":"read-only"},"output":{"format":"json"},"exchanges":`
	for _, tt := range []struct {
		name, file string
		want       []string // the exchanges' run ids
		corrupt    string   // in the error, when the file is corrupt
	}{
		{"two", head + `[{"runId":"r-1"},{"runId":"r-2"}]}`, []string{"r-1", "r-2"}, ""},
		{"none", head + `[]}`, nil, ""},
		{"null", head + `null}`, nil, ""},
		{"no exchanges", `{"version":1,"id":"s-1","cwd":"/w"}`, nil, ""},
		{"a bad exchange", head + `[{"runId":"r-1"},{"prompt":7}]}`, []string{"r-1"}, "exchanges: json: cannot unmarshal"},
		{"cut short", head + `[{"runId":"r-1"},`, []string{"r-1"}, "exchanges"},
		{"not an array", head + `{}}`, nil, "exchanges: not an array"},
		{"more after", head + `[]}{}`, nil, "data after"},
		{"a key after", head + `[], "title": "t"}`, nil, "after them"},
		{"an object closes it", head + `[{"runId":"r-1"}}`, []string{"r-1"}, "exchanges"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := os.WriteFile(st.path("s-1"), []byte(tt.file), 0o644); err != nil {
				t.Fatal(err)
			}
			var got []string
			f, err := st.eachExchange("s-1", func(ex storedExchange) { got = append(got, ex.RunID) })
			if tt.corrupt != "" {
				if !errors.Is(err, errCorrupt) || !strings.Contains(err.Error(), tt.corrupt) {
					t.Errorf("err = %v, want corrupt: %s", err, tt.corrupt)
				}
			} else if err != nil || f.Cwd != "/w" {
				t.Fatalf("eachExchange = %+v, %v", f, err)
			} else if tt.name == "two" && (f.Options.Mode != "read-only" || string(f.Output) != `{"format":"json"}`) {
				t.Errorf("options %+v, output %s: the header's fields are not all read", f.Options, f.Output)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("handed %v, want %v", got, tt.want)
			}
		})
	}
}

// Reading a long session for session/load holds about one exchange at a
// time, not the file: what stays live while each 2 MiB exchange of a 24 MiB
// session is handed over (measured after a collection, so that only what
// is held counts) is a few MiB.
func TestStore_eachExchangeMemoryBounded(t *testing.T) {
	st := &store{dir: t.TempDir()}
	prompt := strings.Repeat("a line of a long prompt that was pasted in.\n", 2<<20/44)
	f := &sessionFile{Version: sessionFileVersion, ID: "s-big", Cwd: "/w", CreatedAt: time.Now(), UpdatedAt: time.Now()}
	for i := range 12 {
		raw, _ := json.Marshal(storedExchange{Prompt: []shownBlock{{Type: "text", Text: prompt}}, History: engine.Exchange{Prompt: "q", Answer: "a"}, RunID: fmt.Sprint("r-", i)})
		f.Exchanges = append(f.Exchanges, raw)
	}
	if err := st.write(f); err != nil {
		t.Fatal(err)
	}
	want := 12 * len(prompt)
	f, prompt = nil, ""
	heap := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	live := func() uint64 {
		runtime.GC()
		metrics.Read(heap)
		return heap[0].Value.Uint64()
	}
	live() // twice: the first leaves json.Marshal's pooled 24 MiB buffer to the pool's victim cache
	base, most, n := live(), uint64(0), 0
	_, err := st.eachExchange("s-big", func(ex storedExchange) {
		n += len(ex.Prompt[0].Text)
		most = max(most, live())
	})
	if err != nil || n != want {
		t.Fatalf("eachExchange: %v, %d bytes of prompts, want %d", err, n, want)
	}
	if held := int64(most) - int64(base); held > 8<<20 {
		t.Errorf("%d MiB stayed live reading a 24 MiB session, want about one 2 MiB exchange's worth", held>>20)
	}
}
