package history

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/coda-acp/coda/internal/jsonrpc"
	"github.com/coda-acp/coda/store"
)

func TestPicks(t *testing.T) {
	p := Picks{Format: "json", Model: "m", Mode: "ask", Commentary: "thought"}
	kept := p.Kept()
	want := map[string]string{"output_format": "json", "model": "m", "mode": "ask", "commentary": "thought"}
	if !maps.Equal(kept, want) {
		t.Errorf("Kept() = %v, want %v (the default effort not kept)", kept, want)
	}
	if got := PicksOf(kept); got != p {
		t.Errorf("PicksOf(Kept()) = %+v, want %+v", got, p)
	}
}

func TestCursor(t *testing.T) {
	info := &store.SessionInfo{ID: "s-1", UpdatedAt: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)}
	got, err := ParseCursor(Cursor(info))
	if err != nil || got.ID != info.ID || !got.UpdatedAt.Equal(info.UpdatedAt) {
		t.Errorf("ParseCursor(Cursor(%+v)) = %+v, %v", info, got, err)
	}
	for _, bad := range []string{"!", "bm90IGEgY3Vyc29y"} {
		if _, err := ParseCursor(bad); !errors.Is(err, jsonrpc.ErrInvalidParams) {
			t.Errorf("ParseCursor(%q) = %v, want -32602", bad, err)
		}
	}
}

func TestSaveWarning(t *testing.T) {
	if w := SaveWarning("s-1", fmt.Errorf("append: %w", store.ErrSessionFull)); !strings.Contains(w, "is full") {
		t.Errorf("a full session's warning = %q", w)
	}
	if w := SaveWarning("s-1", errors.New("disk")); !strings.Contains(w, "could not be saved (disk)") {
		t.Errorf("a failed save's warning = %q", w)
	}
}
