package llm

import (
	"math"
	"testing"
)

// A window read from a server is held to MaxWindow before any arithmetic,
// so that window × 85 cannot overflow; what is not a positive number is
// not known.
func TestWindow(t *testing.T) {
	for _, tt := range []struct {
		in   float64
		want int
	}{
		{200_000, 200_000}, {0, 0}, {-1, 0}, {math.NaN(), 0}, {math.Inf(1), MaxWindow},
		{1e30, MaxWindow}, {1.2e17, MaxWindow}, {MaxWindow + 1, MaxWindow},
	} {
		if got := Window(tt.in); got != tt.want {
			t.Errorf("Window(%g) = %d, want %d", tt.in, got, tt.want)
		}
	}
	if got := Window(math.MaxInt); got != MaxWindow || got*100 < 0 {
		t.Errorf("Window(MaxInt) = %d", got)
	}
}
