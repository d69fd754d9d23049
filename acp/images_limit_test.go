package acp

import (
	"errors"
	"runtime/metrics"
	"strings"
	"testing"
)

// An image over the limit is refused before it is decoded: -32602 naming
// the block, and no copy of its bytes made. (Tested here, not on the wire:
// a 28 MiB line through encoding/json takes minutes under the race
// detector; prompt_image.txtar shows how these errors are answered.)
func TestPromptImages_tooLarge(t *testing.T) {
	huge := strings.Repeat("AAAA", 7<<20) // 21 MiB once decoded
	blocks := []contentBlock{{Type: "text", Text: "Look."}, {Type: "image", MimeType: "image/png", Data: huge}}
	allocs := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(allocs)
	before := allocs[0].Value.Uint64()
	_, err := promptImages(blocks)
	metrics.Read(allocs)
	used := allocs[0].Value.Uint64() - before
	if !errors.Is(err, ErrInvalidParams) || !strings.Contains(err.Error(), "prompt[1]: the image is over the 20.0 MB limit") {
		t.Errorf("a 21 MiB image: %v", err)
	}
	if used > 1<<20 {
		t.Errorf("refusing it allocated %d bytes: it was decoded first", used)
	}
}
