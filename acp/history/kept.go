// Package history is a session's history as its file keeps it and
// session/load shows it again: a prompt as replayed (links and stand-ins,
// not copies), a finished turn as the file's exchange and back as the next
// turn's history, what a turn streamed kept bounded and masked
// (streamed.go), a session's title, and what acp's loader reads of the
// file and writes to it (file.go: picks by name, the read for a load, other
// processes' turns, the replay, list cursors). The file itself is the
// store's (store/session.go).
package history

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/internal/bytesize"
	"github.com/coda-acp/coda/internal/jsonrpc"
	"github.com/coda-acp/coda/store"
)

// A Block is what the history keeps of a prompt's content block.
type Block struct {
	Type, Text, URI, Name, Title, MimeType string
	Data                                   string // an image's bytes, base64
	// ResourceURI and ResourceMimeType are an embedded resource's; Embedded
	// says the block has one.
	Embedded                      bool
	ResourceURI, ResourceMimeType string
}

// Exchange is a finished turn as the session's file keeps it.
func Exchange(prompt []Block, runID string, ex engine.Exchange, streamed []json.RawMessage, closing [][]byte) *store.Exchange {
	kept := engine.KeepHistory([]engine.Exchange{ex})[0]
	stored := &store.Exchange{Prompt: Shown(prompt), History: store.Said{Prompt: kept.Prompt, Answer: kept.Answer, Masked: kept.Masked}, RunID: runID, Streamed: streamed,
		Transcript: engine.EncodeTranscript(kept.Transcript)}
	for _, c := range closing {
		stored.Closing = append(stored.Closing, c)
	}
	return stored
}

// Of is a kept exchange as the next turn sees it.
func Of(ex *store.Exchange) engine.Exchange {
	return engine.Exchange{Prompt: ex.History.Prompt, Answer: ex.History.Answer, RunID: ex.RunID, Masked: ex.History.Masked,
		Transcript: engine.DecodeTranscript(ex.Transcript)}
}

// Shown is the prompt as session/load replays it: text and links; an
// embedded resource becomes a link to it and an image a line naming it, so
// the file does not keep a copy of every file or picture the user
// attached, and other content a one-word stand-in.
func Shown(blocks []Block) []store.PromptBlock {
	out := make([]store.PromptBlock, 0, len(blocks))
	for _, c := range blocks {
		switch c.Type {
		case "text":
			out = append(out, store.PromptBlock{Type: "text", Text: c.Text})
		case "resource_link":
			out = append(out, store.PromptBlock{Type: "resource_link", URI: c.URI, Name: c.Name, Title: c.Title, MimeType: c.MimeType})
		case "resource":
			if c.Embedded {
				out = append(out, store.PromptBlock{Type: "resource_link", URI: c.ResourceURI, Name: linkName(c.ResourceURI), MimeType: c.ResourceMimeType})
			}
		case "image":
			out = append(out, store.PromptBlock{Type: "text", Text: imageStandIn(c)})
		default:
			out = append(out, store.PromptBlock{Type: "text", Text: "[" + c.Type + "]"})
		}
	}
	return out
}

// imageStandIn names an attached image where a replay shows it: "[image
// chart.png, image/png, 2 KB]".
func imageStandIn(c Block) string {
	var parts []string
	if c.URI != "" {
		parts = append(parts, linkName(c.URI))
	}
	size := base64.RawStdEncoding.DecodedLen(len(strings.TrimRight(c.Data, "=")))
	parts = append(parts, c.MimeType, bytesize.Format(size))
	return "[image " + strings.Join(parts, ", ") + "]"
}

// linkName is a resource's name for its link: the last element of its URI.
func linkName(uri string) string {
	name := uri
	if i := strings.LastIndexByte(strings.TrimRight(uri, "/"), '/'); i >= 0 {
		name = strings.TrimRight(uri, "/")[i+1:]
	}
	if name == "" {
		return uri
	}
	return name
}

// AppendShown encodes a stored prompt block as a ContentBlock.
func AppendShown(b []byte, c store.PromptBlock) []byte {
	if c.Type != "resource_link" {
		b = append(b, `{"type":"text","text":`...)
		b = jsonrpc.AppendString(b, c.Text)
		return append(b, '}')
	}
	b = append(b, `{"type":"resource_link","uri":`...)
	b = jsonrpc.AppendString(b, c.URI)
	b = append(b, `,"name":`...)
	b = jsonrpc.AppendString(b, c.Name)
	if c.Title != "" {
		b = append(b, `,"title":`...)
		b = jsonrpc.AppendString(b, c.Title)
	}
	if c.MimeType != "" {
		b = append(b, `,"mimeType":`...)
		b = jsonrpc.AppendString(b, c.MimeType)
	}
	return append(b, '}')
}

// MaxTitle is the longest title, in characters.
const MaxTitle = 80

// Title is a session's title: its first prompt's first line, trimmed and
// cut at a word near MaxTitle characters.
func Title(blocks []Block) string {
	for _, c := range blocks {
		text := c.Text
		if c.Type == "resource_link" {
			text = c.Name
		}
		for line := range strings.Lines(text) {
			if line = strings.TrimSpace(line); line != "" {
				return cutTitle(line)
			}
		}
	}
	return ""
}

func cutTitle(line string) string {
	if utf8.RuneCountInString(line) <= MaxTitle {
		return line
	}
	cut, n := 0, 0
	for i := range line {
		if n == MaxTitle-1 {
			cut = i
			break
		}
		n++
	}
	if sp := strings.LastIndexByte(line[:cut], ' '); sp > cut*3/4 {
		cut = sp
	}
	return strings.TrimRight(line[:cut], " ,.;:-") + "…"
}
