package llm_test

import (
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine/llm"
)

// png is the smallest start of bytes that read as a PNG.
var png = []byte("\x89PNG\r\n\x1a\n" + strings.Repeat("\x00", 100))

// An attached image is checked for its type (by its bytes) and its size.
func TestCheckImage(t *testing.T) {
	tests := []struct {
		mime string
		data []byte
		want string // the type given back, or the error's words
	}{
		{"image/png", png, "image/png"},
		{"IMAGE/JPEG", png, "image/png"}, // the bytes decide
		{"image/jpeg", []byte("\xff\xd8\xff\xe0" + strings.Repeat("\x00", 20)), "image/jpeg"},
		{"image/svg+xml", []byte("<svg/>"), `mimeType "image/svg+xml": coda takes image/png, image/jpeg, image/gif, image/webp`},
		{"image/png", []byte("hello, world"), "data is not a PNG, JPEG, GIF or WebP image (it looks like text/plain)"},
		{"image/png", append(png, make([]byte, llm.MaxImageSize)...), "the image is 20.0 MB, over the 20.0 MB limit"},
	}
	for _, tt := range tests {
		got, err := llm.CheckImage(tt.mime, tt.data)
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("CheckImage(%q, %d bytes) = %q, want %q", tt.mime, len(tt.data), got, tt.want)
		}
	}
}
