package store_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/coda-acp/coda/store"
)

// A turn's transcript is kept with its exchange as its owner encoded it,
// and read back whole by a load and by another process's Refresh; an
// exchange too long for its line loses its transcript first, whole, and
// keeps the rest as it was.
func TestSession_transcript(t *testing.T) {
	st, ss, state := newSession(t, "s-1", 0)
	st.MaxLineBytes = 16 << 10
	other, err := store.New(st.Dir()).LoadSession("s-1", func(*store.Exchange) {})
	if err != nil {
		t.Fatal(err)
	}
	small := exchange(0)
	small.Transcript = json.RawMessage(`[{"role":"user","text":"question 0 <b>"}]`)
	big := exchange(1)
	big.Transcript = json.RawMessage(`[{"role":"tool","text":"` + strings.Repeat("x", 20<<10) + `"}]`)
	for _, ex := range []*store.Exchange{small, big} {
		if err := ss.Append(state, ex); err != nil {
			t.Fatal(err)
		}
	}
	var got []*store.Exchange
	if _, err := store.New(st.Dir()).LoadSession("s-1", func(ex *store.Exchange) { got = append(got, ex) }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || string(got[0].Transcript) != string(small.Transcript) || got[1].Transcript != nil || got[1].History != big.History {
		t.Fatalf("loaded %+v", got)
	}
	var refreshed []*store.Exchange
	if err := other.Session.Refresh(func(ex *store.Exchange) { refreshed = append(refreshed, ex) }); err != nil {
		t.Fatal(err)
	}
	if len(refreshed) != 2 || string(refreshed[0].Transcript) != string(small.Transcript) {
		t.Errorf("refreshed %+v", refreshed)
	}
}
