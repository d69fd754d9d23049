package store_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coda-acp/coda/store"
)

// An exchange is written as plain JSON: a prompt of < > & takes a byte a
// character on its line, not six.
func TestSession_plainLines(t *testing.T) {
	st, ss, state := newSession(t, "s-1", 0)
	ex := exchange(0)
	ex.Prompt[0].Text = strings.Repeat("<", 1000) + "&>"
	ex.History.Prompt = ex.Prompt[0].Text
	if err := ss.Append(state, ex); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(st.SessionPath("s-1"))
	if bytes.Contains(b, []byte(`\u003c`)) || !bytes.Contains(b, []byte(`"<<<<`)) || len(b) > 3000 {
		t.Errorf("the session's file holds %d bytes, HTML-escaped: %.200s", len(b), b)
	}
	var got []string
	l, _ := load(t, store.New(st.Dir()), "s-1")
	l.Session.Replay(func(ex *store.Exchange) { got = append(got, ex.History.Prompt) })
	if len(got) != 1 || got[0] != ex.History.Prompt {
		t.Errorf("replayed %.40q", got)
	}
}

// No line an append writes is one a load leaves out. An exchange longer
// than a line may be (MaxLineBytes) is cut to fit before it is written:
// its streamed commentary from the end, then its longest texts, each cut
// noted; it loads, with its run id and its closing chunks whole, and so
// do the exchanges after it. One that cannot fit even cut (closing chunks
// over the limit) is refused, and nothing of it is written.
func TestSession_longExchange(t *testing.T) {
	const limit = 64 << 10
	st, ss, state := newSession(t, "s-1", 1)
	st.MaxLineBytes = limit
	ex := exchange(1)
	ex.Prompt[0].Text = strings.Repeat("<", 200<<10) // 1.2 MB HTML-escaped
	ex.History = store.Said{Prompt: ex.Prompt[0].Text, Answer: strings.Repeat("\n", 20<<10)}
	for i := range 300 {
		ex.Streamed = append(ex.Streamed, json.RawMessage(fmt.Sprintf(`{"sessionUpdate":"agent_thought_chunk","n":%d,"text":"%s"}`, i, strings.Repeat("t", 500))))
	}
	if err := ss.Append(state, ex); err != nil {
		t.Fatal(err)
	}
	if err := ss.Append(state, exchange(2)); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(st.SessionPath("s-1"))
	for i, line := range bytes.SplitAfter(b, []byte("\n")) {
		if len(line) > limit {
			t.Errorf("line %d is %d bytes, over the %d a load takes", i, len(line), limit)
		}
	}
	l, runs := load(t, st, "s-1")
	if fmt.Sprint(runs) != "[r-0 r-1 r-2]" || len(l.Warnings) != 0 {
		t.Fatalf("loaded %q, warnings %q", runs, l.Warnings)
	}
	var got *store.Exchange
	l.Session.Replay(func(e *store.Exchange) {
		if e.RunID == "r-1" {
			got = e
		}
	})
	if got == nil {
		t.Fatal("r-1 not replayed")
	}
	if !strings.HasPrefix(got.Prompt[0].Text, "<<<<") || !strings.Contains(got.Prompt[0].Text, "bytes cut here") &&
		!strings.Contains(got.History.Prompt, "bytes cut here") {
		t.Errorf("no cut noted: prompt %.60q…, history %.60q…", got.Prompt[0].Text, got.History.Prompt)
	}
	if len(got.Streamed) != 0 && len(got.Streamed) >= len(ex.Streamed) || len(got.Closing) != 1 {
		t.Errorf("kept %d of %d streamed, %d closing", len(got.Streamed), len(ex.Streamed), len(got.Closing))
	}
	if ex.Prompt[0].Text != strings.Repeat("<", 200<<10) || len(ex.Streamed) != 300 {
		t.Error("the caller's exchange was changed")
	}

	// A prompt of many blocks: cut in a few passes, every block kept.
	many := exchange(4)
	for range 500 {
		many.Prompt = append(many.Prompt, store.PromptBlock{Type: "text", Text: strings.Repeat("&", 1<<10)})
	}
	if err := ss.Append(state, many); err != nil {
		t.Fatalf("an exchange of 500 blocks: %v", err)
	}

	// Closing chunks over the limit: refused, nothing written.
	before, _ := os.ReadFile(st.SessionPath("s-1"))
	big := exchange(3)
	big.Closing = []json.RawMessage{json.RawMessage(`{"sessionUpdate":"agent_message_chunk","text":"` + strings.Repeat("a", limit) + `"}`)}
	if err := ss.Append(state, big); !errors.Is(err, store.ErrLineTooLong) {
		t.Errorf("an exchange that cannot fit: %v", err)
	}
	if after, _ := os.ReadFile(st.SessionPath("s-1")); !bytes.Equal(before, after) {
		t.Error("the refused exchange changed the file")
	}
}

// A session of the release before whose exchange is longer than a line
// may be is converted with that exchange cut to fit, not written as a
// line every later load leaves out.
func TestSession_legacyLongExchange(t *testing.T) {
	const limit = 64 << 10
	st := store.New(t.TempDir())
	st.MaxLineBytes = limit
	dir := filepath.Join(st.Dir(), "sessions")
	os.MkdirAll(dir, 0o755)
	long := strings.Repeat("<", 100<<10)
	old := `{"version":1,"id":"s-old","cwd":"/w","createdAt":"2025-11-03T09:12:44Z","updatedAt":"2025-11-03T09:14:02Z","options":{},"exchanges":[` +
		`{"prompt":[{"type":"text","text":"` + long + `"}],"history":{"prompt":"` + long + `","answer":"a"},"runId":"r-long"},` +
		`{"prompt":[{"type":"text","text":"q"}],"history":{"prompt":"q","answer":"a"},"runId":"r-short"}]}`
	os.WriteFile(filepath.Join(dir, "s-old.json"), []byte(old), 0o600)
	l, runs := load(t, st, "s-old")
	if fmt.Sprint(runs) != "[r-long r-short]" {
		t.Fatalf("the old file loads %q", runs)
	}
	if err := l.Session.Append(l.State, exchange(3)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "s-old.json")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("not converted: %v", err)
	}
	again := store.New(st.Dir())
	again.MaxLineBytes = limit
	l, runs = load(t, again, "s-old")
	if fmt.Sprint(runs) != "[r-long r-short r-3]" || len(l.Warnings) != 0 {
		t.Errorf("after the conversion: %q, warnings %q", runs, l.Warnings)
	}
}
