package plainjson_test

import (
	"testing"

	"github.com/coda-acp/coda/internal/plainjson"
)

func TestMarshal(t *testing.T) {
	v := map[string]any{"a": "<b> & c", "n": []int{1}}
	for indent, want := range map[string]string{
		"":   "{\"a\":\"<b> & c\",\"n\":[1]}\n",
		"  ": "{\n  \"a\": \"<b> & c\",\n  \"n\": [\n    1\n  ]\n}\n",
	} {
		b, err := plainjson.Marshal(v, indent)
		if err != nil || string(b) != want {
			t.Errorf("Marshal(%q) = %q, %v; want %q", indent, b, err, want)
		}
	}
}
