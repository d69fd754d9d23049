package engine

import (
	"encoding/json"
	"strings"
	"testing"
)

// replyKey must be refusalKey of the arguments json.Marshal writes for the
// reply, whatever the text (escapes, characters across a piece's end,
// broken UTF-8): a reply that repeats a refused one is a repeat.
func TestReplyKey_isRefusalKeyOfMarshal(t *testing.T) {
	texts := []string{
		"x",
		"<b>&amp;</b> \"quoted\" \\ \n\t\u2028",
		strings.Repeat("é€😀", 40_000),
		strings.Repeat("a\xe2\x82", 30_000) + "\xff\xfe",
	}
	for _, text := range texts {
		want := marshalKey(t, text)
		if got := replyKey(text); got != want {
			t.Errorf("replyKey(%.20q…) differs from the key of its marshalled arguments", text)
		}
		for _, piece := range []int{1, 2, 3, 5, 7} {
			if got := replyKeyPieces(text[:min(len(text), 200)], piece); got != marshalKey(t, text[:min(len(text), 200)]) {
				t.Errorf("pieces of %d: key of %.20q… differs", piece, text)
			}
		}
	}
}

func FuzzReplyKey(f *testing.F) {
	f.Add("ab\xe2\x82\xac\xf0\x9f\x98\x80<>&\x80\x80\x80\x80", 3)
	f.Fuzz(func(t *testing.T, text string, piece int) {
		if piece < 1 || piece > 64 || text == "" {
			return
		}
		if replyKeyPieces(text, piece) != marshalKey(t, text) {
			t.Errorf("pieces of %d: key of %q differs", piece, text)
		}
	})
}

func marshalKey(t *testing.T, text string) string {
	t.Helper()
	args, err := json.Marshal(map[string]string{"content": text})
	if err != nil {
		t.Fatal(err)
	}
	return refusalKey(args)
}
