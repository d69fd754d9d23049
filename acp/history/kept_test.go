package history

import (
	"strings"
	"testing"
)

func TestTitle(t *testing.T) {
	long := strings.Repeat("word ", 30)
	tests := []struct {
		blocks []Block
		want   string
	}{
		{[]Block{{Type: "text", Text: "\n\n  Fix the login bug  \nin auth.go"}}, "Fix the login bug"},
		{[]Block{{Type: "resource_link", Name: "main.go", URI: "file:///w/main.go"}, {Type: "text", Text: "why?"}}, "main.go"},
		{[]Block{{Type: "text", Text: "   "}, {Type: "text", Text: "second"}}, "second"},
		{[]Block{{Type: "text", Text: strings.Repeat("é", 200)}}, strings.Repeat("é", MaxTitle-1) + "…"},
		{[]Block{{Type: "text", Text: long}}, strings.TrimSpace(long[:75]) + "…"},
	}
	for _, tt := range tests {
		if got := Title(tt.blocks); got != tt.want {
			t.Errorf("Title(%v) = %q, want %q", tt.blocks, got, tt.want)
		}
	}
}

// An image is replayed as a line naming it: its file, type and size.
func TestImageStandIn(t *testing.T) {
	for _, tt := range []struct {
		c    Block
		want string
	}{
		{Block{Type: "image", MimeType: "image/png", Data: "iVBORw0KGgo="}, "[image image/png, 8 bytes]"},
		{Block{Type: "image", MimeType: "image/jpeg", Data: strings.Repeat("A", 4096), URI: "file:///home/me/shots/chart.jpg"}, "[image chart.jpg, image/jpeg, 3 KB]"},
	} {
		if got := imageStandIn(tt.c); got != tt.want {
			t.Errorf("imageStandIn = %q, want %q", got, tt.want)
		}
	}
}
