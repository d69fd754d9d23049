package provider

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// ListPages follows the tokens to the last page, and stops at maxPages, at
// a token that repeats, at MaxListed models, or at an error.
func TestListPages(t *testing.T) {
	pages := func(next func(token string) string, per int) func(context.Context, string) ([]Listed, string, error) {
		return func(_ context.Context, token string) ([]Listed, string, error) {
			var out []Listed
			for i := range per {
				out = append(out, Listed{ID: fmt.Sprintf("%s/%d", token, i)})
			}
			return out, next(token), nil
		}
	}
	for _, tt := range []struct {
		name     string
		max, per int
		next     func(string) string
		want     int
	}{
		{"last page", 10, 3, func(tok string) string {
			if tok == "" {
				return "b"
			}
			return ""
		}, 6},
		{"max pages", 2, 3, func(tok string) string { return tok + "x" }, 6},
		{"repeated token", 10, 3, func(string) string { return "same" }, 6},
		{"max listed", 1000, 150, func(tok string) string { return tok + "x" }, MaxListed},
	} {
		got, err := ListPages(context.Background(), tt.max, pages(tt.next, tt.per))
		if err != nil || len(got) != tt.want {
			t.Errorf("%s: %d models, %v; want %d", tt.name, len(got), err, tt.want)
		}
	}
	boom := errors.New("boom")
	if _, err := ListPages(context.Background(), 3, func(context.Context, string) ([]Listed, string, error) { return nil, "", boom }); !errors.Is(err, boom) {
		t.Errorf("error: %v", err)
	}
}
