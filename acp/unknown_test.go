package acp_test

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"

	"github.com/coda-acp/coda/acp"
)

// An unknown session (never made, closed, deleted) is ACP's -32002,
// "resource not found", wherever a request names one, session/close
// included; deleting one succeeds silently, as the conformance kit asks
// (ACP-DELETE-002): a delete sent twice is no error.
func TestUnknownSession(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, served := serve(t, context.Background(), authServer(t, acp.Options{UserModel: "script:ok"}), t.TempDir(), nil)
		c.do(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)
		c.do(`await "id":0`)
		c.do(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}`)
		c.do(`await "id":1`)
		c.do(`{"jsonrpc":"2.0","id":2,"method":"session/close","params":{"sessionId":"s-1"}}`)
		c.do(`await "id":2`)
		requests := map[string]string{
			"session/close":             `{"sessionId":%q}`,
			"session/prompt":            `{"sessionId":%q,"prompt":[{"type":"text","text":"hi"}]}`,
			"session/set_config_option": `{"sessionId":%q,"configId":"mode","value":"ask"}`,
			"session/set_mode":          `{"sessionId":%q,"modeId":"ask"}`,
			"session/load":              `{"sessionId":%q,"cwd":"/w","mcpServers":[]}`,
			"session/resume":            `{"sessionId":%q,"cwd":"/w","mcpServers":[]}`,
			"session/delete":            `{"sessionId":%q}`,
		}
		id := 10
		var sent []string
		for method, params := range requests {
			for _, session := range []string{"s-404", "s-1"} {
				if method == "session/load" || method == "session/resume" {
					if session == "s-1" {
						continue // closed, it is still in the state directory
					}
				}
				id++
				c.do(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, fmt.Sprintf(params, session)))
				c.do(fmt.Sprintf(`await "id":%d,`, id))
				sent = append(sent, fmt.Sprintf("%d %s %s", id, method, session))
			}
		}
		c.closeInput()
		if err := <-served; err != nil {
			t.Fatal(err)
		}
		c.wait()
		for _, s := range sent {
			var n int
			var method, session string
			fmt.Sscan(s, &n, &method, &session)
			got := received(c, fmt.Sprintf(`"id":%d,`, n))
			want := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"error":{"code":-32002,"message":"resource not found: unknown session \"%s\""}}`, n, session)
			if method == "session/delete" {
				want = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{}}`, n)
			}
			if got != want {
				t.Errorf("%s of %s: %s, want %s", method, session, got, want)
			}
		}
	})
}
