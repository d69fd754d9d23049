package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/coda-acp/coda/acp/acptest"
	"github.com/coda-acp/coda/acp/editor"
	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/internal/jsonrpc"
	statestore "github.com/coda-acp/coda/store"
)

// A turn's warnings are notices once each, however often they come (live,
// then again with the closing answer); a long one has its title cut and is
// whole in the description; every line is valid against the schema. A
// client that takes no notices gets none.
func TestUpdateSink_notices(t *testing.T) {
	long := "the MCP server db failed to start: " + strings.Repeat("exec: no such file or directory; ", 8)
	events := []engine.Event{
		{Kind: engine.EventWarning, Text: "stage answer used its 8 iterations"},
		{Kind: engine.EventWarning, Text: long},
		{Kind: engine.EventWarning, Text: "stage answer used its 8 iterations"},
		{Kind: engine.EventFinalAnswer, MessageID: "m-1", Answer: &statestore.Answer{
			RunID: "r-1", Stage: "answer", Format: "text", Content: "ok",
			Warnings: []string{"known to the session", "stage answer used its 8 iterations", "late"},
		}},
	}
	for _, offered := range []bool{true, false} {
		var wire bytes.Buffer
		out := jsonrpc.NewConn(jsonrpc.Options{}, strings.NewReader(""), &wire)
		k := &updateSink{out: out, sessionID: "s-1"}
		if offered {
			k.seen = map[string]bool{"known to the session": true}
		}
		for _, ev := range events {
			if err := k.Emit(context.Background(), ev); err != nil {
				t.Fatal(err)
			}
		}
		if err := out.Close(); err != nil {
			t.Fatal(err)
		}
		var notices []map[string]string
		for line := range strings.Lines(wire.String()) {
			if err := acptest.Check([]byte(line), ""); err != nil {
				t.Errorf("%v: %s", err, line)
			}
			var m struct {
				Params struct {
					Update map[string]any `json:"update"`
				} `json:"params"`
			}
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Fatal(err)
			}
			if m.Params.Update["sessionUpdate"] == "notice" {
				n := map[string]string{}
				for k, v := range m.Params.Update {
					n[k], _ = v.(string)
				}
				notices = append(notices, n)
			}
		}
		if !offered {
			if len(notices) != 0 {
				t.Errorf("notices sent to a client that takes none: %v", notices)
			}
			continue
		}
		var titles []string
		for _, n := range notices {
			titles = append(titles, n["title"])
			if n["severity"] != "warning" {
				t.Errorf("severity %q, want warning", n["severity"])
			}
		}
		if len(notices) != 3 || titles[0] != "stage answer used its 8 iterations" || titles[2] != "late" {
			t.Fatalf("notices %q, want the iterations, the MCP server, late: once each", titles)
		}
		if mcp := notices[1]; len(mcp["title"]) > maxNoticeTitle || !strings.HasSuffix(mcp["title"], "…") || mcp["description"] != strings.TrimSpace(long) {
			t.Errorf("a long warning's notice: title %q, description %q", mcp["title"], mcp["description"])
		}
	}
}

func TestSessionCapability(t *testing.T) {
	for raw, want := range map[string]bool{
		`{"session":{"notices":{}}}`:   true,
		`{"session":{"notices":null}}`: false,
		`{"session":{"notices":true}}`: false,
		`{"session":{}}`:               false,
		`{"session":[]}`:               false,
		`{}`:                           false,
		``:                             false,
	} {
		if got := editor.SessionCapability(json.RawMessage(raw), "notices"); got != want {
			t.Errorf("%s: %v, want %v", raw, got, want)
		}
	}
}
