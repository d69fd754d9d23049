package acp

import (
	"path/filepath"
	"testing"

	"github.com/coda-acp/coda/engine/taint"
	"github.com/google/go-cmp/cmp"
)

func TestPromptSources(t *testing.T) {
	text := func(s string) *string { return &s }
	blocks := []contentBlock{
		{Type: "text", Text: "Look at these."},
		{Type: "resource", Resource: &embeddedResource{URI: "file:///home/me/proj/.env", Text: text("A=1\n")}},
		{Type: "resource", Resource: &embeddedResource{URI: "file:///home/me/proj/my%20notes.md", Text: text("notes\n")}},
		{Type: "resource", Resource: &embeddedResource{URI: "config/.env.local", Text: text("B=2\n")}},
		{Type: "resource", Resource: &embeddedResource{URI: "zed://untitled/.env", Text: text("C=3\n")}},
		// Not content the model reads: no source.
		{Type: "resource", Resource: &embeddedResource{URI: "file:///home/me/proj/key.pem", Blob: text("AAAA")}},
		{Type: "resource_link", URI: "file:///home/me/proj/secrets/x"},
	}
	want := []taint.Source{
		{Path: filepath.FromSlash("/home/me/proj/.env"), Text: "A=1\n"},
		{Path: filepath.FromSlash("/home/me/proj/my notes.md"), Text: "notes\n"},
		{Path: filepath.FromSlash("config/.env.local"), Text: "B=2\n"},
		{Path: filepath.FromSlash("/.env"), Text: "C=3\n"},
	}
	if diff := cmp.Diff(want, promptSources(blocks)); diff != "" {
		t.Errorf("promptSources (-want +got):\n%s", diff)
	}
}
