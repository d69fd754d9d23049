package store_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/coda-acp/coda/store"
)

// A fork is a new file with the source's exchanges, in order; the source's
// file is unchanged, and a fork of a session that is not there leaves
// nothing.
func TestStore_ForkSession(t *testing.T) {
	dir := t.TempDir()
	s := store.New(dir)
	read := func(id string) string {
		b, err := os.ReadFile(filepath.Join(dir, "sessions", id+".jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	state := store.SessionState{ID: "s-1", Cwd: "/w", CreatedAt: time.Now(), Options: map[string]string{"mode": "read-only"}}
	src, err := s.CreateSession(state)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"one", "two"} {
		if err := src.Append(state, &store.Exchange{History: store.Said{Prompt: p, Answer: p + "!"}, RunID: "r-" + p}); err != nil {
			t.Fatal(err)
		}
	}
	before := read("s-1")
	fork, n, err := s.ForkSession("s-1", func(st store.SessionState) store.SessionState {
		st.ID, st.Cwd = "s-2", "/v"
		return st
	})
	if err != nil || n != 2 {
		t.Fatalf("ForkSession: %d exchanges, %v; want 2, nil", n, err)
	}
	var got []string
	l, err := s.LoadSession(fork.ID(), func(ex *store.Exchange) { got = append(got, ex.History.Prompt+"/"+ex.RunID) })
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != "one/r-one" || got[1] != "two/r-two" || l.State.Cwd != "/v" || l.State.Options["mode"] != "read-only" {
		t.Errorf("the fork holds %q, cwd %q, options %v; want one then two, in /v, read-only", got, l.State.Cwd, l.State.Options)
	}
	if after := read("s-1"); after != before {
		t.Errorf("the source's file changed:\n%s\nwas\n%s", after, before)
	}
	if _, _, err := s.ForkSession("s-9", func(st store.SessionState) store.SessionState { st.ID = "s-3"; return st }); !errors.Is(err, store.ErrNoSession) {
		t.Errorf("a fork of a missing session: %v, want store.ErrNoSession", err)
	}
	if _, err := s.LoadSession("s-3", func(*store.Exchange) {}); !errors.Is(err, store.ErrNoSession) {
		t.Errorf("a failed fork left its file: %v", err)
	}
}
