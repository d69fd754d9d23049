package fakekit

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// A Stream writes a reply's events as they are made, each flushed: server
// sent events (SSE) or JSON lines (NDJSON).
type Stream struct {
	w   http.ResponseWriter
	eol string // what ends an event: "\n\n", or Gemini's "\r\n\r\n"
}

// SSE starts an event stream of Content-Type contentType, events ended by
// eol ("\n\n"; Gemini's is "\r\n\r\n").
func SSE(w http.ResponseWriter, contentType, eol string) *Stream {
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(http.StatusOK)
	return &Stream{w: w, eol: eol}
}

// NDJSON starts a stream of JSON lines, as Ollama's.
func NDJSON(w http.ResponseWriter) *Stream {
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	return &Stream{w: w, eol: "\n"}
}

// Data writes one event of v's JSON, without an event name (an SSE data
// line, or a JSON line).
func (s *Stream) Data(v any) {
	b, _ := json.Marshal(v)
	if s.eol == "\n" {
		s.w.Write(append(b, '\n'))
	} else {
		fmt.Fprintf(s.w, "data: %s%s", b, s.eol)
	}
	s.w.(http.Flusher).Flush()
}

// Event writes one named event of v's JSON.
func (s *Stream) Event(name string, v any) {
	b, _ := json.Marshal(v)
	fmt.Fprintf(s.w, "event: %s\ndata: %s%s", name, b, s.eol)
	s.w.(http.Flusher).Flush()
}

// Raw writes text as it is: an end marker such as "data: [DONE]\n\n".
func (s *Stream) Raw(text string) { fmt.Fprint(s.w, text) }

// Words cuts text into the pieces it is streamed in, a word each, the
// space after a word kept with it; "" is none.
func Words(text string) []string {
	if text == "" {
		return nil
	}
	return strings.SplitAfter(text, " ")
}

// WordsSpaceFirst cuts text into pieces of a word each, the space before
// a word kept with it, as Anthropic and Gemini cut theirs.
func WordsSpaceFirst(text string) []string {
	var out []string
	for text != "" {
		i := strings.IndexByte(text[1:], ' ')
		if i < 0 {
			out = append(out, text)
			break
		}
		out = append(out, text[:i+1])
		text = text[i+1:]
	}
	return out
}

// Halves splits s in two, for a call's arguments streamed in two
// fragments, as the APIs cut them anywhere.
func Halves(s string) []string {
	if len(s) < 2 {
		return []string{s}
	}
	return []string{s[:len(s)/2], s[len(s)/2:]}
}
