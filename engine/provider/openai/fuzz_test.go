package openai

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/provider/sse"
)

// FuzzStream feeds arbitrary bodies to the stream reader: it may fail, but
// not panic, and a reply it accepts has well-formed tool calls.
func FuzzStream(f *testing.F) {
	for _, name := range []string{"text_parallel_tools.sse", "ollama_whole_tools.sse", "noindex_fragments.sse", "reasoning.sse", "midstream_error.sse", "gemini_signatures.sse", "refusal.sse"} {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Fuzz(func(t *testing.T, body string) {
		started := false
		s := stream{onDelta: func(llm.Delta) error { return nil }, started: &started}
		resp, err := s.read(sse.NewReader(strings.NewReader(body)))
		if err != nil {
			return
		}
		for _, tc := range resp.ToolCalls {
			if tc.ID == "" || len(tc.Arguments) == 0 {
				t.Fatalf("tool call %+v", tc)
			}
		}
	})
}

// FuzzResponses feeds arbitrary bodies to the Responses stream reader: it
// may fail, but not panic, and a reply it accepts has well-formed tool
// calls and a Replay that is JSON.
func FuzzResponses(f *testing.F) {
	for _, name := range []string{"responses_text.sse", "responses_reasoning_tools.sse", "responses_incomplete.sse", "responses_refusal.sse", "responses_failed.sse", "responses_error.sse"} {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Fuzz(func(t *testing.T, body string) {
		started := false
		s := rstream{onDelta: func(llm.Delta) error { return nil }, started: &started}
		resp, err := s.read(sse.NewReader(strings.NewReader(body)))
		if err != nil {
			return
		}
		for _, tc := range resp.ToolCalls {
			if tc.ID == "" || len(tc.Arguments) == 0 {
				t.Fatalf("tool call %+v", tc)
			}
		}
		if resp.Replay != nil && !json.Valid(resp.Replay) {
			t.Fatalf("replay %q", resp.Replay)
		}
		// What the reply's Replay holds goes back as input items.
		msg := llm.Message{Role: llm.RoleAssistant, Text: resp.Text, ToolCalls: resp.ToolCalls, Replay: resp.Replay}
		if _, err := json.Marshal(appendAssistant(nil, &msg, "gpt-5.5")); err != nil {
			t.Fatalf("the items sent back: %v", err)
		}
	})
}
