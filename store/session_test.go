package store_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/coda-acp/coda/store"
)

// newSession makes session id in a new state directory, with turns
// exchanges appended.
func newSession(t *testing.T, id string, turns int) (*store.Store, *store.Session, store.SessionState) {
	t.Helper()
	st := store.New(t.TempDir())
	state := store.SessionState{ID: id, Cwd: "/w", CreatedAt: time.Now().UTC(), Options: map[string]string{"mode": "ask"}}
	ss, err := st.CreateSession(state)
	if err != nil {
		t.Fatal(err)
	}
	for i := range turns {
		if err := ss.Append(state, exchange(i)); err != nil {
			t.Fatal(err)
		}
	}
	return st, ss, state
}

func exchange(i int) *store.Exchange {
	return &store.Exchange{
		Prompt:  []store.PromptBlock{{Type: "text", Text: fmt.Sprintf("question %d", i)}},
		History: store.Said{Prompt: fmt.Sprintf("question %d", i), Answer: fmt.Sprintf("answer %d", i)},
		RunID:   fmt.Sprintf("r-%d", i), Closing: []json.RawMessage{json.RawMessage(`{"sessionUpdate":"agent_message_chunk"}`)},
	}
}

// load reads session id: the run ids of its exchanges, in order.
func load(t *testing.T, st *store.Store, id string) (*store.Loaded, []string) {
	t.Helper()
	var runs []string
	l, err := st.LoadSession(id, func(ex *store.Exchange) { runs = append(runs, ex.RunID) })
	if err != nil {
		t.Fatal(err)
	}
	return l, runs
}

// What a turn streamed is kept with its exchange, and replayed as it was
// appended; an exchange written before it was kept (no "streamed") loads
// and replays without it.
func TestSession_streamed(t *testing.T) {
	st, ss, state := newSession(t, "s-1", 0)
	ex := exchange(0)
	ex.Streamed = []json.RawMessage{json.RawMessage(`{"sessionUpdate":"agent_thought_chunk","text":"Checking."}`)}
	if err := ss.Append(state, ex); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(st.SessionPath("s-1"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"type":"exchange","at":"2026-11-01T10:00:00Z","exchange":{"prompt":[{"type":"text","text":"older"}],"history":{"prompt":"older","answer":"a"},"runId":"r-old","closing":[{"sessionUpdate":"agent_message_chunk"}]}}` + "\n")
	f.Close()
	l, runs := load(t, store.New(st.Dir()), "s-1")
	if diff := cmp.Diff([]string{"r-0", "r-old"}, runs); diff != "" || len(l.Warnings) != 0 {
		t.Fatalf("exchanges (-want +got):\n%s\nwarnings %q", diff, l.Warnings)
	}
	var streamed []string
	if err := l.Session.Replay(func(ex *store.Exchange) {
		streamed = append(streamed, fmt.Sprintf("%s %q", ex.RunID, ex.Streamed))
	}); err != nil {
		t.Fatal(err)
	}
	want := []string{`r-0 ["{\"sessionUpdate\":\"agent_thought_chunk\",\"text\":\"Checking.\"}"]`, `r-old []`}
	if diff := cmp.Diff(want, streamed); diff != "" {
		t.Errorf("replayed (-want +got):\n%s", diff)
	}
}

// A session's file is its header, then one line an update or exchange;
// a load folds the updates in and hands the exchanges over in order; a
// save that changes nothing writes nothing.
func TestSession_appendAndLoad(t *testing.T) {
	st, ss, state := newSession(t, "s-1", 3)
	state.Title, state.Options = "Where is it?", map[string]string{"mode": "auto-edit", "effort": "high"}
	if err := ss.Save(state); err != nil {
		t.Fatal(err)
	}
	if err := ss.Save(state); err != nil {
		t.Fatal(err)
	}
	delete(state.Options, "effort")
	if err := ss.Append(state, exchange(3)); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(st.SessionPath("s-1"))
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != 1+3+1+2 {
		t.Errorf("the file has %d lines, want the header, 3 exchanges, an update, and an update with an exchange:\n%s", len(lines), b)
	}
	l, runs := load(t, st, "s-1")
	if diff := cmp.Diff([]string{"r-0", "r-1", "r-2", "r-3"}, runs); diff != "" {
		t.Errorf("exchanges (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(state, l.State); diff != "" || len(l.Warnings) != 0 {
		t.Errorf("state (-want +got):\n%s\nwarnings %q", diff, l.Warnings)
	}
	var replayed []string
	if err := l.Session.Replay(func(ex *store.Exchange) { replayed = append(replayed, ex.History.Answer) }); err != nil || len(replayed) != 4 || replayed[3] != "answer 3" {
		t.Errorf("Replay: %v, %q", err, replayed)
	}
}

// A crash mid-append leaves a last line without its end: a load leaves it
// out with one warning, the listing notes it, and the next append cuts it
// off before it writes, wherever the line was cut.
func TestSession_tornLastLine(t *testing.T) {
	st, _, state := newSession(t, "s-1", 2)
	path := st.SessionPath("s-1")
	whole, _ := os.ReadFile(path)
	start := strings.LastIndexByte(strings.TrimSuffix(string(whole), "\n"), '\n') + 1
	for cut := start + 1; cut < len(whole); cut += 7 {
		if err := os.WriteFile(path, whole[:cut], 0o600); err != nil {
			t.Fatal(err)
		}
		st := store.New(st.Dir())
		l, runs := load(t, st, "s-1")
		if len(runs) != 1 || len(l.Warnings) != 1 || !strings.Contains(l.Warnings[0], "cut short") {
			t.Fatalf("cut at %d: exchanges %q, warnings %q; want the first alone and one warning", cut, runs, l.Warnings)
		}
		page, err := st.ListSessions("", nil, 50)
		if err != nil || len(page.Sessions) != 1 || !strings.Contains(page.Sessions[0].Note, "cut short") {
			t.Fatalf("cut at %d: listed %+v, %v; want a note", cut, page, err)
		}
		if err := l.Session.Append(state, exchange(5)); err != nil {
			t.Fatal(err)
		}
		l, runs = load(t, st, "s-1")
		if diff := cmp.Diff([]string{"r-0", "r-5"}, runs); diff != "" || len(l.Warnings) != 0 {
			t.Fatalf("cut at %d, then appended: (-want +got):\n%s\nwarnings %q", cut, diff, l.Warnings)
		}
		if page, _ := st.ListSessions("", nil, 50); page.Sessions[0].Note != "" {
			t.Errorf("cut at %d, then appended: still noted %q", cut, page.Sessions[0].Note)
		}
	}
}

// A line that cannot be read, or is over the limit, is left out with a
// warning; the lines after it load.
func TestSession_badLines(t *testing.T) {
	st, _, _ := newSession(t, "s-1", 1)
	path := st.SessionPath("s-1")
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("not json\n")
	f.WriteString(`{"type":"exchange","at":"2026-01-01T00:00:00Z","exchange":{"runId":"r-long","prompt":[{"type":"text","text":"` + strings.Repeat("x", 5000) + "\"}]}}\n")
	f.WriteString(`{"type":"a-later-kind","at":"2026-01-01T00:00:00Z"}` + "\n")
	f.Close()
	st.MaxLineBytes = 4096
	for i := range 2 {
		ss, _ := st.LoadSession("s-1", nil)
		ss.Session.Append(store.SessionState{ID: "s-1", Cwd: "/w"}, exchange(10+i))
	}
	l, runs := load(t, st, "s-1")
	if diff := cmp.Diff([]string{"r-0", "r-10", "r-11"}, runs); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if len(l.Warnings) != 2 {
		t.Errorf("warnings %q, want one for the line not read, one for the long one", l.Warnings)
	}
}

// A file that is not a session's header is refused, saying why.
func TestSession_corrupt(t *testing.T) {
	st := store.New(t.TempDir())
	dir := filepath.Join(st.Dir(), "sessions")
	os.MkdirAll(dir, 0o755)
	for name, content := range map[string]string{
		"empty":        "",
		"not JSON":     "nope\n",
		"no end":       `{"type":"session","version":2,"session":{"id":"s-1","cwd":"/w"}}`,
		"wrong id":     `{"type":"session","version":2,"session":{"id":"s-2","cwd":"/w"}}` + "\n",
		"relative cwd": `{"type":"session","version":2,"session":{"id":"s-1","cwd":"w"}}` + "\n",
		"version":      `{"type":"session","version":3,"session":{"id":"s-1","cwd":"/w"}}` + "\n",
		"not a header": `{"type":"exchange","exchange":{}}` + "\n",
	} {
		os.WriteFile(filepath.Join(dir, "s-1.jsonl"), []byte(content), 0o600)
		var ce *store.CorruptError
		if _, err := st.LoadSession("s-1", nil); !errors.As(err, &ce) || ce.Path != filepath.Join(dir, "s-1.jsonl") {
			t.Errorf("%s: LoadSession = %v, want a corrupt file", name, err)
		}
	}
	if _, err := st.LoadSession("s-none", nil); !errors.Is(err, store.ErrNoSession) {
		t.Errorf("a missing session: %v", err)
	}
}

// A session of the release before (testdata/s-legacy.json) loads and
// lists as it did; the first append converts it to the append-only
// layout, keeping its exchanges, and removes the old file.
func TestSession_legacy(t *testing.T) {
	st := store.New(t.TempDir())
	dir := filepath.Join(st.Dir(), "sessions")
	os.MkdirAll(dir, 0o755)
	old, err := os.ReadFile("testdata/s-legacy.json")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "s-legacy.json"), old, 0o600)
	page, err := st.ListSessions("/home/me/project", nil, 50)
	if err != nil || len(page.Sessions) != 1 {
		t.Fatalf("listed %+v, %v", page, err)
	}
	want := store.SessionInfo{ID: "s-legacy", Cwd: "/home/me/project", AdditionalDirectories: []string{"/home/me/lib"},
		Title: "Where is the config parsed?", UpdatedAt: time.Date(2025, 11, 3, 9, 14, 2, 5e8, time.UTC)}
	if diff := cmp.Diff(want, page.Sessions[0], cmp.AllowUnexported(store.SessionInfo{}), cmp.FilterPath(func(p cmp.Path) bool {
		return strings.Contains(p.String(), "size") || strings.Contains(p.String(), "legacy")
	}, cmp.Ignore())); diff != "" {
		t.Errorf("listed (-want +got):\n%s", diff)
	}
	l, runs := load(t, st, "s-legacy")
	if diff := cmp.Diff([]string{"r-20251103-091244-a1", "r-20251103-091350-b2"}, runs); diff != "" {
		t.Errorf("exchanges (-want +got):\n%s", diff)
	}
	wantState := store.SessionState{ID: "s-legacy", Cwd: "/home/me/project", AdditionalDirectories: []string{"/home/me/lib"},
		Title: "Where is the config parsed?", CreatedAt: time.Date(2025, 11, 3, 9, 12, 44, 118e6, time.UTC),
		Options: map[string]string{"output_format": "json", "mode": "auto-edit"}}
	if diff := cmp.Diff(wantState, l.State); diff != "" {
		t.Errorf("state (-want +got):\n%s", diff)
	}
	var answers []string
	l.Session.Replay(func(ex *store.Exchange) { answers = append(answers, ex.History.Answer) })
	if len(answers) != 2 || answers[0] != "In cmd/coda/config.go, by loadConfig." {
		t.Errorf("replayed %q", answers)
	}
	// A save that changes nothing leaves the file as it is.
	if err := l.Session.Save(l.State); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "s-legacy.json")); string(b) != string(old) {
		t.Error("a save that changed nothing rewrote the old file")
	}
	state := l.State
	state.Options["mode"] = "ask"
	if err := l.Session.Append(state, exchange(3)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "s-legacy.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the old file is still there: %v", err)
	}
	l, runs = load(t, store.New(st.Dir()), "s-legacy")
	if len(runs) != 3 || runs[2] != "r-3" || l.State.Options["mode"] != "ask" || l.State.Title != wantState.Title {
		t.Errorf("after the first append: %q, %+v", runs, l.State)
	}
	if got := store.New(st.Dir()).SessionPath("s-legacy"); filepath.Ext(got) != ".jsonl" {
		t.Errorf("SessionPath = %s", got)
	}
}

// A session of the release before that fits the limit (MaxSessionBytes)
// as it is, but not once written anew as append-only lines with the turn
// appended, is not converted: the append is refused (ErrSessionFull), the
// old file stays as it was and loads, and no new or temporary file is
// left.
func TestSession_legacyFull(t *testing.T) {
	st := store.New(t.TempDir())
	dir := filepath.Join(st.Dir(), "sessions")
	os.MkdirAll(dir, 0o755)
	old, err := os.ReadFile("testdata/s-legacy.json")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "s-legacy.json"), old, 0o600)
	st.MaxSessionBytes = int64(len(old)) + 16 // loads, but the new layout's lines and a turn do not fit
	l, _ := load(t, st, "s-legacy")
	err = l.Session.Append(l.State, exchange(3))
	if !errors.Is(err, store.ErrSessionFull) || !strings.Contains(err.Error(), "coda loads no session over") {
		t.Fatalf("the append that would convert past the limit: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "s-legacy.json")); string(b) != string(old) {
		t.Error("the refused append changed the old file")
	}
	for _, d := range []string{dir, filepath.Join(st.Dir(), "tmp")} {
		entries, _ := os.ReadDir(d)
		for _, e := range entries {
			if e.Name() != "s-legacy.json" {
				t.Errorf("left behind: %s", filepath.Join(d, e.Name()))
			}
		}
	}
	if _, runs := load(t, store.New(st.Dir()), "s-legacy"); len(runs) != 2 {
		t.Errorf("after the refusal the session loads %q", runs)
	}
	st.MaxSessionBytes = 0 // the default: room again
	if err := l.Session.Append(l.State, exchange(3)); err != nil {
		t.Fatalf("the append with room: %v", err)
	}
	if _, runs := load(t, store.New(st.Dir()), "s-legacy"); len(runs) != 3 {
		t.Errorf("converted: %q", runs)
	}
}

// session/list's pages come from the index: newest first, each session
// once, a cwd's own, the ones another process wrote included.
func TestListSessions_index(t *testing.T) {
	dir := t.TempDir()
	a, b := store.New(dir), store.New(dir) // two processes
	for i := range 7 {
		cwd := "/w"
		if i%2 == 1 {
			cwd = "/x"
		}
		if _, err := a.CreateSession(store.SessionState{ID: fmt.Sprintf("s-%d", i), Cwd: cwd}); err != nil {
			t.Fatal(err)
		}
	}
	ids := func(st *store.Store, cwd string) []string {
		var out []string
		var after *store.SessionInfo
		for {
			page, err := st.ListSessions(cwd, after, 2)
			if err != nil {
				t.Fatal(err)
			}
			for _, in := range page.Sessions {
				out = append(out, in.ID)
			}
			if !page.More {
				return out
			}
			after = &page.Sessions[len(page.Sessions)-1]
		}
	}
	if diff := cmp.Diff([]string{"s-6", "s-5", "s-4", "s-3", "s-2", "s-1", "s-0"}, ids(b, "")); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// b's turn in s-2 and a's deletion of s-4 reach both.
	l, _ := b.LoadSession("s-2", nil)
	l.Session.Append(l.State, exchange(1))
	a.DeleteSession("s-4")
	for name, st := range map[string]*store.Store{"a": a, "b": b} {
		if diff := cmp.Diff([]string{"s-2", "s-6", "s-0"}, ids(st, "/w")); diff != "" {
			t.Errorf("%s: /w (-want +got):\n%s", name, diff)
		}
	}
	// Without its index, the listing is made again from the files.
	os.RemoveAll(filepath.Join(dir, "index"))
	if diff := cmp.Diff([]string{"s-2", "s-6", "s-5", "s-3", "s-1", "s-0"}, ids(store.New(dir), "")); diff != "" {
		t.Errorf("rebuilt (-want +got):\n%s", diff)
	}
}

// An append holds its session's file locked from the repair of a torn last
// line to its write: another process appending meanwhile waits, and no
// exchange is lost. (Two Stores on one directory are two processes here:
// each opens the file anew, and the lock is the open file's.) Without the
// lock, the second append would cut the torn line and write while the first
// is between finding where to cut and cutting, and the first's cut would
// then take the second's exchange with it.
func TestSession_appendsLocked(t *testing.T) {
	st, _, state := newSession(t, "s-1", 1)
	path := st.SessionPath("s-1")
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"type":"exchange","at":"2026-01-01T00:00:00Z","exch`) // a crash mid-append
	f.Close()
	a, b := store.New(st.Dir()), store.New(st.Dir())
	la, _ := a.LoadSession("s-1", nil)
	lb, _ := b.LoadSession("s-1", nil)
	inWindow, goOn := make(chan struct{}), make(chan struct{})
	var once sync.Once
	a.BeforeWrite = func(string) { // first at the cut of the torn line
		once.Do(func() { close(inWindow); <-goOn })
	}
	aDone := make(chan error, 1)
	go func() { aDone <- la.Session.Append(state, exchange(1)) }()
	hang := time.NewTimer(time.Minute) // only a hang gets there
	defer hang.Stop()
	select {
	case <-inWindow:
	case <-hang.C:
		t.Fatal("the first append never reached its cut")
	}
	waiting, bDone := make(chan struct{}), make(chan error, 1)
	b.BeforeLockWait = func(string) { close(waiting) }
	go func() { bDone <- lb.Session.Append(state, exchange(2)) }()
	select {
	case <-waiting: // as it must: the first holds the lock
	case err := <-bDone:
		t.Errorf("the second append (%v) went through while the first held its file", err)
		bDone <- err
	case <-hang.C:
		t.Fatal("the second append neither waited nor ended")
	}
	close(goOn)
	for _, done := range []chan error{aDone, bDone} {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-hang.C:
			t.Fatal("an append never ended")
		}
	}
	_, runs := load(t, store.New(st.Dir()), "s-1")
	if diff := cmp.Diff([]string{"r-0", "r-1", "r-2"}, runs); diff != "" {
		t.Errorf("exchanges (-want +got):\n%s", diff)
	}
}

// The first listing reads every session file its index does not know
// (seconds at 10,000): meanwhile an append in another session, which notes
// its line in the listing's copy, goes through (issue 23: one waited 8.3 s
// behind a listing of 10,000 sessions). The listing then has it.
func TestListSessions_buildBesideAppends(t *testing.T) {
	dir := t.TempDir()
	first := store.New(dir)
	for _, id := range []string{"s-1", "s-2", "s-3"} {
		if _, err := first.CreateSession(store.SessionState{ID: id, Cwd: "/w"}); err != nil {
			t.Fatal(err)
		}
	}
	os.RemoveAll(filepath.Join(dir, "index")) // the next start reads the files
	st := store.New(dir)
	l, _ := load(t, st, "s-1")
	held, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	st.BeforeRead = func(path string) {
		if !strings.Contains(path, "s-1") {
			once.Do(func() { close(held); <-release })
		}
	}
	listed := make(chan *store.ListPage, 1)
	go func() {
		page, err := st.ListSessions("", nil, 50)
		if err != nil {
			t.Error(err)
		}
		listed <- page
	}()
	hang := time.NewTimer(time.Minute) // only a hang gets there
	defer hang.Stop()
	select {
	case <-held:
	case <-hang.C:
		t.Fatal("the listing never read a session's file")
	}
	appended := make(chan error, 1)
	go func() {
		err := l.Session.Append(l.State, exchange(1))
		st.Flush() // its index line, as acp writes it once the answer is out
		appended <- err
	}()
	select {
	case err := <-appended:
		if err != nil {
			t.Fatal(err)
		}
	case <-hang.C:
		t.Fatal("the append waited for the listing")
	}
	close(release)
	var page *store.ListPage
	select {
	case page = <-listed:
	case <-hang.C:
		t.Fatal("the listing never ended")
	}
	if page == nil || len(page.Sessions) != 3 || page.Sessions[0].ID != "s-1" {
		t.Errorf("listed %+v, want the three, s-1 first (its turn the latest)", page)
	}
}

// A turn's append is synced before the answer, its index line is not: it
// is written by Flush (acp's, once the answer is out), or by a listing in
// the process first. A process that dies before leaves the index a line
// short, and another process's listing still shows the session as its
// file says.
func TestSession_indexAfterTheAnswer(t *testing.T) {
	dir := t.TempDir()
	st := store.New(dir)
	state := store.SessionState{ID: "s-1", Cwd: "/w"}
	ss, err := st.CreateSession(state)
	if err != nil {
		t.Fatal(err)
	}
	index := filepath.Join(dir, "index", "sessions.jsonl")
	size := func() int64 {
		fi, err := os.Stat(index)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	before := size()
	state.Title = "Where is the config parsed?"
	if err := ss.Append(state, exchange(1)); err != nil {
		t.Fatal(err)
	}
	if size() != before {
		t.Error("the index was written before the append returned")
	}
	page, err := store.New(dir).ListSessions("", nil, 50) // another process
	if err != nil || len(page.Sessions) != 1 || page.Sessions[0].Title != state.Title {
		t.Errorf("another process listed %+v, %v; want the session with its new title", page, err)
	}
	st.Flush()
	if size() == before {
		t.Error("Flush did not write the index's line")
	}
	state.Title = "A second title"
	if err := ss.Append(state, exchange(2)); err != nil {
		t.Fatal(err)
	}
	if page, err := st.ListSessions("", nil, 50); err != nil || len(page.Sessions) != 1 || page.Sessions[0].Title != state.Title {
		t.Errorf("the process listed %+v, %v; want its own append's title", page, err)
	}
}

// A session's file never grows past what coda loads (MaxSessionBytes): the
// append that would is refused (ErrSessionFull) and writes nothing, so the
// session still loads, whole, as it was; a file over the limit (the limit
// lowered since) is refused by a load, saying so, not read.
func TestSession_full(t *testing.T) {
	st, ss, state := newSession(t, "s-1", 2)
	fi, _ := os.Stat(st.SessionPath("s-1"))
	st.MaxSessionBytes = fi.Size() + fi.Size()/2 // room for one more exchange (each a little over a third of it), not two
	if err := ss.Append(state, exchange(2)); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(st.SessionPath("s-1"))
	err := ss.Append(state, exchange(3))
	if !errors.Is(err, store.ErrSessionFull) || !strings.Contains(err.Error(), "coda loads no session over") {
		t.Fatalf("the append past the limit: %v", err)
	}
	state.Title = "A title too many"
	if err := ss.Save(state); !errors.Is(err, store.ErrSessionFull) {
		t.Errorf("a save past the limit: %v", err)
	}
	if after, _ := os.ReadFile(st.SessionPath("s-1")); string(after) != string(before) {
		t.Errorf("the refused appends wrote %d bytes", len(after)-len(before))
	}
	l, runs := load(t, st, "s-1")
	if diff := cmp.Diff([]string{"r-0", "r-1", "r-2"}, runs); diff != "" || len(l.Warnings) != 0 {
		t.Errorf("exchanges (-want +got):\n%s\nwarnings %q", diff, l.Warnings)
	}
	st.MaxSessionBytes = fi.Size()
	var ce *store.CorruptError
	if _, err := st.LoadSession("s-1", nil); !errors.As(err, &ce) || !strings.Contains(err.Error(), "over the") {
		t.Errorf("a file over the limit: %v", err)
	}
}
