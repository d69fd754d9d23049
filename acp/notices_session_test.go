package acp_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/coda-acp/coda/acp"
	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/store"
)

// session/set_mode warns only when the session's file cannot be saved: that
// warning is in its response's _meta.coda.warnings and, to a client that
// takes notices, a notice before the response, once for the session however
// often the file fails again (a second set_mode, a set_config_option).
func TestNotices_setModeSaveFailed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		state, work := t.TempDir(), t.TempDir()
		srv, err := acp.NewServer(acp.Options{
			Agent: testAgent(t), UserModel: "script:ok",
			Engine: &engine.Engine{Models: oneModel{heldModel{}}, IDs: counter(), Store: store.New(state)},
		})
		if err != nil {
			t.Fatal(err)
		}
		c, served := serve(t, context.Background(), srv, work, nil)
		c.do(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"session":{"notices":{}}}}}`)
		c.do(`await "id":0`)
		c.do(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"` + work + `","mcpServers":[]}}`)
		c.do(`await "available_commands_update"`)
		// The session's file can no longer be written: a directory is in
		// its place.
		file := filepath.Join(state, "sessions", "s-1.jsonl")
		if err := os.Remove(file); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(file, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, line := range []string{
			`{"jsonrpc":"2.0","id":2,"method":"session/set_mode","params":{"sessionId":"s-1","modeId":"read-only"}}`,
			`await "id":2`,
			`{"jsonrpc":"2.0","id":3,"method":"session/set_mode","params":{"sessionId":"s-1","modeId":"auto-edit"}}`,
			`await "id":3`,
			`{"jsonrpc":"2.0","id":4,"method":"session/set_config_option","params":{"sessionId":"s-1","configId":"mode","value":"read-only"}}`,
			`await "id":4`,
		} {
			c.do(line)
		}
		c.closeInput()
		if err := <-served; err != nil {
			t.Fatal(err)
		}
		c.wait()
		lines, _ := c.lines()
		var notices []int
		response := -1
		for i, l := range lines {
			switch {
			case strings.Contains(l, `"sessionUpdate":"notice"`):
				notices = append(notices, i)
				if !strings.Contains(l, "session s-1 could not be saved") {
					t.Errorf("the notice: %s", l)
				}
			case strings.Contains(l, `"id":2,`):
				response = i
			}
			for _, id := range []string{`"id":2,`, `"id":3,`, `"id":4,`} {
				if strings.Contains(l, id) && !strings.Contains(l, `"warnings":["session s-1 could not be saved`) {
					t.Errorf("a response without the warning: %s", l)
				}
			}
		}
		if len(notices) != 1 || response < 0 || notices[0] > response {
			t.Errorf("notices at lines %v, the first set_mode's response at %d; want one notice, before it:\n%s", notices, response, strings.Join(lines, "\n"))
		}
	})
}
