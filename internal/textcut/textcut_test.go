package textcut_test

import (
	"testing"

	"github.com/coda-acp/coda/internal/textcut"
)

func TestAt(t *testing.T) {
	for _, tt := range []struct {
		s    string
		n    int
		want string
	}{
		{"hello", 10, "hello"},
		{"hello", 5, "hello"},
		{"hello", 3, "hel"},
		{"héllo", 2, "h"},       // é is bytes 1-2: cutting at 2 would split it
		{"héllo", 3, "hé"},      // at 3 it is whole
		{"日本", 4, "日"},          // 日 is 3 bytes, 本 begins at 3
		{"日本", 2, ""},           // no whole character fits
		{"ab\x80\x80c", 3, "a"}, // stray continuation bytes are backed over too
		{"", 0, ""},
	} {
		if got := textcut.At(tt.s, tt.n); got != tt.want {
			t.Errorf("At(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
		if got := string(textcut.At([]byte(tt.s), tt.n)); got != tt.want {
			t.Errorf("At([]byte(%q), %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
}

func TestTrimPartialRune(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"hello", "hello"},
		{"h\xc3", "h"},       // the first byte of é
		{"h\xc3\xa9", "hé"},  // é whole
		{"\xe6\x97", ""},     // two bytes of 日
		{"ab\x80", "ab\x80"}, // a stray continuation byte is not a partial character
		{"", ""},
	} {
		if got := string(textcut.TrimPartialRune([]byte(tt.in))); got != tt.want {
			t.Errorf("TrimPartialRune(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
