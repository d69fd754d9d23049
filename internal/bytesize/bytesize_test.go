package bytesize_test

import (
	"testing"

	"github.com/coda-acp/coda/internal/bytesize"
)

func TestFormat(t *testing.T) {
	for _, tt := range []struct {
		n    int
		want string
	}{
		{0, "0 bytes"},
		{512, "512 bytes"},
		{1 << 10, "1 KB"},
		{1<<10 + 1, "2 KB"}, // rounded up: never shown smaller than it is
		{34 << 10, "34 KB"},
		{5 << 19, "2.5 MB"},
	} {
		if got := bytesize.Format(tt.n); got != tt.want {
			t.Errorf("Format(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}
