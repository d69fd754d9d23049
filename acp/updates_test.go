package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coda-acp/coda/acp/acptest"
	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/internal/jsonrpc"
	"github.com/coda-acp/coda/outputspec"
	statestore "github.com/coda-acp/coda/store"
)

// The sink keeps the chunks a turn closes with (the final answer and its
// artifacts' links, or the no-answer line), exactly as they were sent, and
// nothing streamed: not commentary or a tool call that merely says
// "final_answer".
func TestUpdateSink_closing(t *testing.T) {
	var wire bytes.Buffer
	out := jsonrpc.NewConn(jsonrpc.Options{}, strings.NewReader(""), &wire)
	k := &updateSink{out: out, sessionID: "s-1", cwd: "/w"}
	ctx := context.Background()
	for _, ev := range []engine.Event{
		{Kind: engine.EventText, Stage: "answer", MessageID: "m-1", Text: `"phase":"final_answer"`},
		{Kind: engine.EventThought, Stage: "answer", MessageID: "m-1", Text: "x"},
		{Kind: engine.EventToolCall, ToolCall: &engine.ToolCallEvent{ID: "t-1", RawInput: json.RawMessage(`{"_meta":{"coda":{"phase":"final_answer"}}}`)}},
		{Kind: engine.EventFinalAnswer, MessageID: "m-2", Answer: &statestore.Answer{
			RunID: "r-1", Stage: "answer", Format: "json", Content: `{"a":1}`,
			Artifacts: []outputspec.Artifact{{Name: "report.md", Path: "report.md", MimeType: "text/markdown", Size: 3}},
		}},
		{Kind: engine.EventNoAnswer, MessageID: "m-3", Text: "No answer.", Answer: &statestore.Answer{RunID: "r-2", Status: "failed"}},
	} {
		if err := k.Emit(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	var sent []string
	for line := range strings.Lines(wire.String()) {
		var m struct {
			Params struct {
				Update json.RawMessage `json:"update"`
			} `json:"params"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		sent = append(sent, string(m.Params.Update))
	}
	if len(sent) != 6 {
		t.Fatalf("the sink sent %d lines, want 6:\n%s", len(sent), wire.String())
	}
	var kept []string
	for _, u := range k.closing {
		kept = append(kept, string(u))
	}
	if diff := cmp.Diff(sent[3:], kept); diff != "" {
		t.Errorf("closing chunks kept (-sent +kept):\n%s", diff)
	}
}

// usage_update carries the call's prompt-cache tokens in _meta.coda where
// the provider reported any (issue 20: cache read and write tokens in
// usage_update), and is the schema's UsageUpdate either way.
func TestUpdateSink_usageCache(t *testing.T) {
	for _, tt := range []struct {
		usage llm.Usage
		meta  string
	}{
		{llm.Usage{InputTokens: 1000, OutputTokens: 20, CacheReadTokens: 900, CacheWriteTokens: 80, ContextWindow: 200000}, `"_meta":{"coda":{"cacheReadTokens":900,"cacheWriteTokens":80}}`},
		{llm.Usage{InputTokens: 1000, OutputTokens: 20, ContextWindow: 200000}, ""},
	} {
		var wire bytes.Buffer
		out := jsonrpc.NewConn(jsonrpc.Options{}, strings.NewReader(""), &wire)
		k := &updateSink{out: out, sessionID: "s-1", cwd: "/w"}
		if err := k.Emit(context.Background(), engine.Event{Kind: engine.EventUsage, Usage: &tt.usage}); err != nil {
			t.Fatal(err)
		}
		if err := out.Close(); err != nil {
			t.Fatal(err)
		}
		var m struct {
			Params struct {
				Update json.RawMessage `json:"update"`
			} `json:"params"`
		}
		if err := json.Unmarshal(wire.Bytes(), &m); err != nil {
			t.Fatalf("%v: %s", err, wire.String())
		}
		if err := acptest.CheckUpdate(m.Params.Update); err != nil {
			t.Errorf("%s: %v", m.Params.Update, err)
		}
		if got := string(m.Params.Update); tt.meta != "" && !strings.Contains(got, tt.meta) || tt.meta == "" && strings.Contains(got, "_meta") {
			t.Errorf("usage_update %s, want %q", got, tt.meta)
		}
	}
}

// A permission request shows its tool call as session/update does: a
// diff's old text, and a new file's oldText null.
func TestToolCallObject(t *testing.T) {
	old := "before"
	raw := toolCallObject(&engine.ToolCallEvent{
		ID: "t-1", Title: "Write a.txt", Kind: "edit", Status: engine.ToolPending,
		Content: []engine.ToolContent{
			{Diff: &engine.Diff{Path: "/w/a.txt", OldText: &old, NewText: "after"}},
			{Diff: &engine.Diff{Path: "/w/new.txt", NewText: "fresh"}},
		},
	})
	var tc map[string]any
	if err := json.Unmarshal(raw, &tc); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	if tc["toolCallId"] != "t-1" || tc["kind"] != "edit" || tc["title"] != "Write a.txt" {
		t.Errorf("toolCall = %v", tc)
	}
	content := tc["content"].([]any)
	first, second := content[0].(map[string]any), content[1].(map[string]any)
	if first["type"] != "diff" || first["oldText"] != "before" || second["oldText"] != nil {
		t.Errorf("content = %v", content)
	}
	if _, ok := second["oldText"]; !ok {
		t.Errorf("a new file's diff lacks oldText: null: %v", second)
	}
}
