package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/coda-acp/coda/acp/acptest"
)

// TestConformanceV1 re-implements the v1 suite of the ACP conformance kit
// (github.com/EugeneTheDev/acp-tck, src/tck/v1: requirements.py and
// conformance/*.py) against coda, one subtest per requirement id. The kit
// itself needs Python 3.14 and pytest, which this project's machines do not
// have; what each requirement asserts is read off the kit's requirement
// text and tests, and checked here the same way: every connection is a
// fresh coda process (the test binary as coda, a clean environment, the
// script model), spoken to over its stdin and stdout as the kit's mock
// client does (permission requests answered with the first option, any
// other request of coda's -32601, since the client advertises
// clientCapabilities {}). A requirement gated on a capability coda does not
// advertise is skipped, as the kit skips it.
//
// Where the kit waits a quiet period to conclude that nothing more comes
// (no reply to a notification, nothing after a response), this test sends
// a later request and reads up to its answer: coda handles messages in wire
// order, so what would have come comes first, and no wall clock is read.
func TestConformanceV1(t *testing.T) {
	bin, err := exec.LookPath("coda")
	if err != nil {
		t.Fatalf("the test binary as coda is not on PATH (TestMain): %v", err)
	}
	var (
		mu  sync.Mutex
		all []*tckAgent // every connection's transcript, for the checks over all of them
	)
	open := func(t *testing.T, script string, args ...string) *tckAgent {
		a := startAgent(t, bin, script, args...)
		mu.Lock()
		all = append(all, a)
		mu.Unlock()
		return a
	}

	// The capabilities coda advertises decide which requirements apply.
	caps := func() map[string]any {
		a := open(t, helloScript)
		return a.handshake(nil)["agentCapabilities"].(map[string]any)
	}()
	offers := func(path string) bool {
		var v any = caps
		for _, k := range strings.Split(path, ".") {
			m, ok := v.(map[string]any)
			if !ok {
				return false
			}
			v = m[k]
		}
		b, isBool := v.(bool)
		return (isBool && b) || (!isBool && v != nil)
	}
	gate := func(t *testing.T, path string) {
		if !offers(path) {
			t.Skipf("coda does not advertise agentCapabilities.%s", path)
		}
	}

	t.Run("exchanges", func(t *testing.T) {
		for id, check := range map[string]func(t *testing.T){
			"ACP-JSONRPC-001": func(t *testing.T) {
				a := open(t, helloScript)
				if got := a.response(a.request("initialize", initParams(nil), 424242))["id"]; got != float64(424242) {
					t.Errorf("integer id echoed as %v", got)
				}
				if got := a.response(a.request("session/new", newParams(a.cwd), "tck-string-id"))["id"]; got != "tck-string-id" {
					t.Errorf("string id echoed as %v", got)
				}
			},
			"ACP-JSONRPC-002": func(t *testing.T) {
				a := open(t, helloScript)
				for _, r := range []map[string]any{
					a.response(a.request("initialize", initParams(nil), nil)),
					a.response(a.request("session/new", map[string]any{"mcpServers": []any{}}, nil)), // no cwd
				} {
					if err := envelope(r); err != "" {
						t.Errorf("%s: %v", err, r)
					}
				}
			},
			"ACP-JSONRPC-003": func(t *testing.T) {
				a := open(t, helloScript)
				a.handshake(nil)
				sid := a.newSession()
				a.notify("session/cancel", map[string]any{"sessionId": sid})
				for _, e := range a.until(a.request("_tck/sync", nil, nil)) {
					if e.msg["method"] == nil {
						t.Errorf("a reply came to the session/cancel notification: %s", e.raw)
					}
				}
			},
			"ACP-JSONRPC-004": func(t *testing.T) {
				a := open(t, helloScript)
				a.handshake(nil)
				if code := errCode(a.response(a.request("_tck/does_not_exist", nil, nil))); code != -32601 {
					t.Errorf("an unknown method is answered %d, want -32601", code)
				}
			},
			"ACP-JSONRPC-005": func(t *testing.T) {
				a := open(t, helloScript)
				a.handshake(nil)
				a.response(a.request("_tck/does_not_exist", nil, nil))
				a.newSession()
			},
			"ACP-INIT-001": func(t *testing.T) {
				a := open(t, helloScript)
				r := a.response(a.request("initialize", initParams(nil), nil))
				if _, ok := r["result"].(map[string]any)["protocolVersion"].(float64); !ok {
					t.Errorf("protocolVersion is no integer: %v", r)
				}
			},
			"ACP-INIT-002": func(t *testing.T) {
				a := open(t, helloScript)
				if v := a.handshake(nil)["protocolVersion"]; v != float64(1) {
					t.Errorf("protocolVersion %v for a v1 request", v)
				}
			},
			"ACP-INIT-003": func(t *testing.T) {
				a := open(t, helloScript)
				p := map[string]any{"protocolVersion": 65535, "clientCapabilities": map[string]any{}, "info": map[string]any{"name": "acp-tck", "version": "0.1.0"}}
				res, _ := a.response(a.request("initialize", p, nil))["result"].(map[string]any)
				v, ok := res["protocolVersion"].(float64)
				if !ok || v == 65535 || v < 1 {
					t.Errorf("an unsupported version is answered %v, want a result with coda's own version (>= 1)", res)
				}
			},
			"ACP-INIT-004": func(t *testing.T) {
				a := open(t, helloScript)
				info, _ := a.handshake(nil)["agentInfo"].(map[string]any)
				if _, ok := info["name"].(string); !ok {
					t.Errorf("agentInfo %v has no name", info)
				}
				if _, ok := info["version"].(string); !ok {
					t.Errorf("agentInfo %v has no version", info)
				}
			},
			"ACP-SCHEMA-001": func(t *testing.T) {
				a := open(t, helloScript)
				a.handshake(nil)
				a.prompt(a.newSession(), textBlock("hello"))
				for _, e := range a.received() {
					if err := acptest.Check(e.raw, a.answering(e)); err != nil {
						t.Errorf("%v\n  line: %s", err, e.raw)
					}
				}
			},
			"ACP-SESSION-001": func(t *testing.T) {
				a := open(t, helloScript)
				a.handshake(nil)
				if sid := a.newSession(); sid == "" {
					t.Errorf("an empty sessionId")
				}
			},
			"ACP-SESSION-002": func(t *testing.T) {
				a := open(t, helloScript)
				a.handshake(nil)
				if x, y := a.newSession(), a.newSession(); x == y {
					t.Errorf("two sessions have the id %s", x)
				}
			},
			"ACP-PROMPT-001": func(t *testing.T) {
				a := open(t, helloScript)
				a.handshake(nil)
				wantStop(t, a.prompt(a.newSession(), textBlock("hello")).response)
			},
			"ACP-PROMPT-002": func(t *testing.T) {
				a := open(t, helloScript)
				a.handshake(nil)
				sid := a.newSession()
				turn := a.prompt(sid, textBlock("hello"))
				if len(turn.updates) == 0 {
					t.Errorf("no session/update during the turn")
				}
				for _, u := range turn.updates {
					if err := acptest.Check(u.raw, ""); err != nil || u.params()["sessionId"] != sid {
						t.Errorf("an update (%v) not of session %s: %s", err, sid, u.raw)
					}
				}
			},
			"ACP-PROMPT-003": func(t *testing.T) {
				a := open(t, helloScript)
				a.handshake(nil)
				turn := a.prompt(a.newSession(), textBlock("Read this."), map[string]any{"type": "resource_link", "uri": "file://" + a.cwd + "/notes.txt", "name": "notes.txt"})
				wantStop(t, turn.response)
			},
			"ACP-CANCEL-001": func(t *testing.T) {
				a := open(t, slowScript)
				a.handshake(nil)
				sid := a.newSession()
				turn := a.promptWith(sid, []any{textBlock("count slowly")}, nil, func() { a.notify("session/cancel", map[string]any{"sessionId": sid}) })
				if stop := resultOf(turn.response)["stopReason"]; stop != "cancelled" {
					t.Errorf("a cancelled prompt is answered %v, want stopReason cancelled", turn.response)
				}
			},
			"ACP-CANCEL-002": func(t *testing.T) {
				a := open(t, slowScript)
				a.handshake(nil)
				sid := a.newSession()
				a.promptWith(sid, []any{textBlock("count slowly")}, nil, func() { a.notify("session/cancel", map[string]any{"sessionId": sid}) })
				a.nothingAfter(t, sid)
			},
			"ACP-LOAD-001": func(t *testing.T) {
				gate(t, "loadSession")
				a := open(t, helloScript)
				a.handshake(nil)
				sid := a.newSession()
				a.prompt(sid, textBlock("hello"))
				r := a.response(a.request("session/load", loadParams(sid, a.cwd, true), nil))
				if r["result"] == nil {
					t.Errorf("session/load: %v", r)
				}
			},
			"ACP-LOAD-002": func(t *testing.T) {
				gate(t, "loadSession")
				a := open(t, helloScript)
				a.handshake(nil)
				sid := a.newSession()
				a.prompt(sid, textBlock("hello"))
				if r := a.response(a.request("session/load", loadParams(sid, a.cwd, true), nil)); r["result"] == nil {
					t.Fatalf("session/load: %v", r)
				}
				a.nothingAfter(t, sid)
			},
			"ACP-LOAD-003": func(t *testing.T) {
				gate(t, "loadSession")
				a := open(t, helloScript)
				a.handshake(nil)
				sid := a.newSession()
				if _, ok := a.response(a.request("session/load", loadParams(sid, a.cwd, true), nil))["result"].(map[string]any); !ok {
					t.Errorf("session/load's result is no object")
				}
			},
			"ACP-RESUME-001": func(t *testing.T) {
				gate(t, "sessionCapabilities.resume")
				a := open(t, helloScript)
				a.handshake(nil)
				sid := a.newSession()
				if r := a.response(a.request("session/resume", loadParams(sid, a.cwd, false), nil)); r["result"] == nil {
					t.Errorf("session/resume: %v", r)
				}
			},
			"ACP-RESUME-002": func(t *testing.T) {
				gate(t, "sessionCapabilities.resume")
				a := open(t, helloScript)
				a.handshake(nil)
				sid := a.newSession()
				a.prompt(sid, textBlock("hello"))
				for _, e := range a.until(a.request("session/resume", loadParams(sid, a.cwd, false), nil)) {
					switch e.update()["sessionUpdate"] {
					case "user_message_chunk", "agent_message_chunk", "agent_thought_chunk":
						t.Errorf("session/resume replayed history before its response: %s", e.raw)
					}
				}
			},
			"ACP-LIST-001": func(t *testing.T) {
				gate(t, "sessionCapabilities.list")
				a := open(t, helloScript)
				a.handshake(nil)
				a.newSession()
				if _, ok := resultOf(a.response(a.request("session/list", map[string]any{}, nil)))["sessions"].([]any); !ok {
					t.Errorf("session/list has no sessions array")
				}
			},
			"ACP-LIST-002": func(t *testing.T) {
				gate(t, "sessionCapabilities.list")
				a := open(t, helloScript)
				a.handshake(nil)
				a.newSession()
				empty := filepath.Join(a.cwd, "no-session-here")
				os.Mkdir(empty, 0o755)
				if s, ok := resultOf(a.response(a.request("session/list", map[string]any{"cwd": empty}, nil)))["sessions"].([]any); !ok || len(s) != 0 {
					t.Errorf("session/list of an unused cwd: %v, want sessions: []", s)
				}
			},
			"ACP-DELETE-001": func(t *testing.T) {
				gate(t, "sessionCapabilities.delete")
				a := open(t, helloScript)
				a.handshake(nil)
				sid := a.newSession()
				if r := a.response(a.request("session/delete", map[string]any{"sessionId": sid}, nil)); r["result"] == nil {
					t.Errorf("session/delete: %v", r)
				}
			},
			"ACP-DELETE-002": func(t *testing.T) {
				gate(t, "sessionCapabilities.delete")
				a := open(t, helloScript)
				a.handshake(nil)
				if r := a.response(a.request("session/delete", map[string]any{"sessionId": "tck-never-created-session"}, nil)); r["result"] == nil {
					t.Errorf("deleting an unknown session should succeed silently: %v", r)
				}
			},
			"ACP-CLOSE-001": func(t *testing.T) {
				gate(t, "sessionCapabilities.close")
				a := open(t, helloScript)
				a.handshake(nil)
				if r := a.response(a.request("session/close", map[string]any{"sessionId": a.newSession()}, nil)); r["result"] == nil {
					t.Errorf("session/close: %v", r)
				}
			},
			"ACP-CLOSE-002": func(t *testing.T) {
				gate(t, "sessionCapabilities.close")
				a := open(t, slowScript)
				a.handshake(nil)
				sid := a.newSession()
				var closeID any
				turn := a.promptWith(sid, []any{textBlock("count slowly")}, nil, func() { closeID = a.request("session/close", map[string]any{"sessionId": sid}, "tck-close") })
				if stop := resultOf(turn.response)["stopReason"]; stop != "cancelled" {
					t.Errorf("a prompt its session/close interrupted is answered %v, want stopReason cancelled", turn.response)
				}
				if r := a.response(closeID); r["result"] == nil {
					t.Errorf("session/close: %v", r)
				}
			},
			"ACP-ADDDIRS-001": func(t *testing.T) {
				gate(t, "sessionCapabilities.additionalDirectories")
				a := open(t, helloScript)
				a.handshake(nil)
				p := newParams(a.cwd)
				p["additionalDirectories"] = []any{t.TempDir()}
				if r := a.response(a.request("session/new", p, nil)); r["result"] == nil {
					t.Errorf("session/new with additionalDirectories: %v", r)
				}
			},
			"ACP-MODES-001": func(t *testing.T) {
				a := open(t, helloScript)
				a.handshake(nil)
				modes, _ := resultOf(a.response(a.request("session/new", newParams(a.cwd), nil)))["modes"].(map[string]any)
				if modes == nil {
					t.Skip("session/new returned no modes")
				}
				if !slices.Contains(modeIDs(modes), modes["currentModeId"]) {
					t.Errorf("currentModeId %v is none of %v", modes["currentModeId"], modeIDs(modes))
				}
			},
			"ACP-MODES-002": func(t *testing.T) {
				a := open(t, helloScript)
				a.handshake(nil)
				res := resultOf(a.response(a.request("session/new", newParams(a.cwd), nil)))
				modes, _ := res["modes"].(map[string]any)
				if modes == nil {
					t.Skip("session/new returned no modes")
				}
				other := ""
				for _, id := range modeIDs(modes) {
					if id != modes["currentModeId"] {
						other = id.(string)
					}
				}
				for _, e := range a.until(a.request("session/set_mode", map[string]any{"sessionId": res["sessionId"], "modeId": other}, nil)) {
					if u := e.update(); u["sessionUpdate"] == "current_mode_update" && u["currentModeId"] != other {
						t.Errorf("current_mode_update without currentModeId %q: %s", other, e.raw)
					}
				}
				if r := a.last(); r["result"] == nil {
					t.Errorf("session/set_mode: %v", r)
				}
			},
			"ACP-CONFIG-001": func(t *testing.T) {
				a := open(t, helloScript)
				a.handshake(nil)
				opts, _ := resultOf(a.response(a.request("session/new", newParams(a.cwd), nil)))["configOptions"].([]any)
				if opts == nil {
					t.Skip("session/new returned no configOptions")
				}
				for _, o := range opts {
					o := o.(map[string]any)
					if o["type"] == "select" && !slices.Contains(selectValues(o), o["currentValue"]) {
						t.Errorf("option %v: currentValue %v is none of its options", o["id"], o["currentValue"])
					}
					if o["type"] == "boolean" {
						if _, ok := o["currentValue"].(bool); !ok {
							t.Errorf("boolean option %v: currentValue %v", o["id"], o["currentValue"])
						}
					}
				}
			},
			"ACP-CONFIG-002": func(t *testing.T) {
				a := open(t, helloScript)
				a.handshake(nil)
				res := resultOf(a.response(a.request("session/new", newParams(a.cwd), nil)))
				opts, _ := res["configOptions"].([]any)
				if opts == nil {
					t.Skip("session/new returned no configOptions")
				}
				first := opts[0].(map[string]any)
				value := ""
				for _, v := range selectValues(first) {
					if v != first["currentValue"] {
						value = v.(string)
						break
					}
				}
				after, _ := resultOf(a.response(a.request("session/set_config_option", map[string]any{"sessionId": res["sessionId"], "configId": first["id"], "value": value}, nil)))["configOptions"].([]any)
				var ids, was []any
				for _, o := range opts {
					was = append(was, o.(map[string]any)["id"])
				}
				for _, o := range after {
					o := o.(map[string]any)
					ids = append(ids, o["id"])
					if o["id"] == first["id"] && o["currentValue"] != value {
						t.Errorf("option %v is %v after it was set to %q", o["id"], o["currentValue"], value)
					}
				}
				for _, id := range was {
					if !slices.Contains(ids, id) {
						t.Errorf("set_config_option's answer leaves out option %v (it has %v)", id, ids)
					}
				}
			},
			"ACP-CONFIG-003": func(t *testing.T) {
				a := open(t, helloScript)
				a.handshake(nil)
				opts, _ := resultOf(a.response(a.request("session/new", newParams(a.cwd), nil)))["configOptions"].([]any)
				for _, o := range opts {
					if o.(map[string]any)["type"] == "boolean" {
						t.Errorf("a boolean option though the client did not advertise session.configOptions.boolean: %v", o)
					}
				}
			},
			"ACP-PROMPTCAP-001": func(t *testing.T) {
				gate(t, "promptCapabilities.image")
				a := open(t, helloScript)
				a.handshake(nil)
				wantStop(t, a.prompt(a.newSession(), textBlock("What is this?"), map[string]any{"type": "image", "mimeType": "image/png", "data": onePixelPNG}).response)
			},
			"ACP-PROMPTCAP-002": func(t *testing.T) {
				gate(t, "promptCapabilities.audio")
				t.Fatal("coda advertises audio, which this test does not exercise")
			},
			"ACP-PROMPTCAP-003": func(t *testing.T) {
				gate(t, "promptCapabilities.embeddedContext")
				a := open(t, helloScript)
				a.handshake(nil)
				wantStop(t, a.prompt(a.newSession(), textBlock("Summarise it."), map[string]any{"type": "resource", "resource": map[string]any{"uri": "file://" + a.cwd + "/notes.txt", "mimeType": "text/plain", "text": "Some notes."}}).response)
			},
			"ACP-AUTH-001": func(t *testing.T) {
				a := open(t, helloScript)
				res := a.handshake(nil)
				var ids []any
				for _, m := range asSlice(res["authMethods"]) {
					id := m.(map[string]any)["id"]
					if slices.Contains(ids, id) {
						t.Errorf("auth method id %v twice", id)
					}
					ids = append(ids, id)
				}
			},
			"ACP-AUTH-002": func(t *testing.T) {
				a := open(t, helloScript)
				for _, m := range asSlice(a.handshake(nil)["authMethods"]) {
					if m.(map[string]any)["type"] == "terminal" {
						t.Errorf("a terminal auth method though the client did not advertise auth.terminal: %v", m)
					}
				}
			},
			"ACP-AUTH-003": func(t *testing.T) {
				a := open(t, helloScript)
				methods := asSlice(a.handshake(nil)["authMethods"])
				if len(methods) == 0 {
					t.Skip("coda advertises no auth method")
				}
				// The kit needs --tck-auth-method: coda's one method is "env".
				r := a.response(a.request("authenticate", map[string]any{"methodId": methods[0].(map[string]any)["id"]}, nil))
				if _, ok := r["result"].(map[string]any); !ok {
					t.Fatalf("authenticate with a reachable model: %v", r)
				}
				if r := a.response(a.request("session/new", newParams(a.cwd), nil)); errCode(r) == -32000 {
					t.Errorf("session/new after authenticate: %v", r)
				}
			},
			"ACP-AUTH-004": func(t *testing.T) {
				gate(t, "auth.logout")
				t.Fatal("coda advertises logout, which this test does not exercise")
			},
			"ACP-AUTH-005": func(t *testing.T) {
				a := open(t, helloScript)
				if len(asSlice(a.handshake(nil)["authMethods"])) > 0 {
					t.Skip("coda advertises authMethods: the requirement is about agents that advertise none")
				}
				a.newSession()
			},
			"ACP-CLIENTCAP-001": func(t *testing.T) {
				a := open(t, toolsScript, "--agent", toolsAgent(t))
				a.handshake(nil)
				a.prompt(a.newSession(), textBlock("Look at the notes, then answer."))
				for _, r := range a.clientRequests {
					if strings.HasPrefix(r.method(), "fs/") {
						t.Errorf("coda called %s though the client advertised no fs", r.method())
					}
				}
			},
			"ACP-CLIENTCAP-002": func(t *testing.T) {
				a := open(t, toolsScript, "--agent", toolsAgent(t))
				a.handshake(nil)
				a.prompt(a.newSession(), textBlock("Look at the notes, then answer."))
				ran := false
				for _, r := range a.clientRequests {
					if strings.HasPrefix(r.method(), "terminal/") {
						t.Errorf("coda called %s though the client advertised no terminal", r.method())
					}
					ran = ran || r.method() == "session/request_permission"
				}
				if !ran {
					t.Errorf("the shell call never asked: the check ran nothing")
				}
			},
			"ACP-CLIENTCAP-003": func(t *testing.T) {
				a := open(t, toolsScript, "--agent", toolsAgent(t))
				a.handshake(nil)
				a.prompt(a.newSession(), textBlock("Look at the notes, then answer."))
				for _, r := range a.clientRequests {
					if r.method() == "elicitation/create" {
						t.Errorf("coda elicited though the client advertised no elicitation")
					}
				}
			},
			"ACP-EXT-001": func(t *testing.T) {
				a := open(t, helloScript)
				a.handshake(nil)
				if r := a.response(a.request("_tck/custom", map[string]any{"x": 1}, nil)); r["result"] == nil && r["error"] == nil {
					t.Errorf("no answer to a custom request: %v", r)
				}
			},
			"ACP-META-001": func(t *testing.T) {
				a := open(t, helloScript)
				a.handshake(nil)
				turn := a.promptWith(a.newSession(), []any{textBlock("hello")}, map[string]any{"_meta": map[string]any{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}}, nil)
				wantStop(t, turn.response)
			},
			"ACP-SHUTDOWN-001": func(t *testing.T) {
				a := open(t, helloScript)
				a.handshake(nil)
				a.newSession()
				if code := a.close(); code != 0 {
					t.Errorf("coda exited %d after stdin closed", code)
				}
			},
			"ACP-STDERR-001": func(t *testing.T) {
				a := open(t, helloScript)
				a.handshake(nil)
				a.newSession()
				a.close()
				t.Logf("informational: %d bytes on stderr over initialize and session/new", len(a.stderr.String()))
			},
			"ACP-INFO-PARSE-001": func(t *testing.T) {
				a := open(t, helloScript)
				a.handshake(nil)
				a.sendRaw([]byte("this is not json"))
				first := a.next()
				a.newSession()
				t.Logf("informational: a line that is not JSON is answered %s; the connection goes on", first.raw)
			},
			"ACP-INFO-INVALIDREQ-001": func(t *testing.T) {
				a := open(t, helloScript)
				a.handshake(nil)
				a.sendRaw([]byte(`{"foo": "bar"}`))
				first := a.next()
				a.newSession()
				t.Logf("informational: JSON that is no JSON-RPC message is answered %s; the connection goes on", first.raw)
			},
			"ACP-INFO-UNKNOWNSESSION-001": func(t *testing.T) {
				a := open(t, helloScript)
				a.handshake(nil)
				a.newSession()
				r := a.response(a.request("session/prompt", map[string]any{"sessionId": "tck-never-created-session", "prompt": []any{textBlock("hello")}}, nil))
				t.Logf("informational: a prompt for an unknown session is answered %v", r["error"])
				if errCode(r) != -32002 {
					t.Errorf("an unknown session is answered %v, want -32002 (DESIGN §8)", r)
				}
			},
		} {
			t.Run(id, func(t *testing.T) {
				t.Parallel()
				check(t)
			})
		}
	})

	// What holds over every line of every connection above.
	mu.Lock()
	defer mu.Unlock()
	t.Run("ACP-TRANSPORT-001", func(t *testing.T) {
		for _, a := range all {
			for _, e := range a.received() {
				_, hasID := e.msg["id"]
				if e.msg == nil || e.msg["jsonrpc"] != "2.0" || (e.msg["method"] == nil && !hasID) || bytes.ContainsAny(e.raw, "\n\r") {
					t.Errorf("not one JSON-RPC 2.0 message: %q", e.raw)
				}
			}
		}
	})
	t.Run("ACP-TRANSPORT-002", func(t *testing.T) {
		for _, a := range all {
			if !utf8.Valid(a.stdout()) {
				t.Errorf("stdout is not valid UTF-8")
			}
		}
	})
	t.Run("ACP-SCHEMA-002", func(t *testing.T) {
		// Every params and result names only members its definition
		// names, outside _meta (acptest's checks, deeper than the kit's
		// root-level one).
		for _, a := range all {
			for _, e := range a.received() {
				var err error
				switch method := e.method(); {
				case method == "session/update":
					err = acptest.CheckUpdate(jsonOf(e.params()["update"]))
				case method != "":
					err = acptest.CheckCall(method, jsonOf(e.msg["params"]))
				case e.msg["result"] != nil && acptest.ResultDef(a.answering(e)) != "":
					err = acptest.CheckResult(a.answering(e), jsonOf(e.msg["result"]))
				}
				if err != nil {
					t.Errorf("%v\n  line: %s", err, e.raw)
				}
			}
		}
	})
	t.Run("ACP-ERROR-001", func(t *testing.T) {
		n := 0
		for _, a := range all {
			for _, e := range a.received() {
				if em, ok := e.msg["error"].(map[string]any); ok {
					n++
					if msg, _ := em["message"].(string); msg == "" || strings.ContainsAny(msg, "\n\r") {
						t.Errorf("an error message that is empty or spans lines: %s", e.raw)
					}
				}
			}
		}
		if n == 0 {
			t.Errorf("no error was provoked: the check saw nothing")
		}
	})
}

// The script models of the connections.
const (
	// helloScript replies; a reply is the default agent's answer.
	helloScript = `
[[turn]]
text = "Hello."
[[turn]]
text = "Hello again."
[[turn]]
text = "Hello once more."
`
	// slowScript streams for 30 s unless cancelled.
	slowScript = `
[[turn]]
delay_ms = 1000
text = ["one ", "two ", "three ", "four ", "five ", "six ", "seven ", "eight ", "nine ", "ten ", "eleven ", "twelve ", "thirteen ", "fourteen ", "fifteen ", "sixteen ", "seventeen ", "eighteen ", "nineteen ", "twenty ", "21 ", "22 ", "23 ", "24 ", "25 ", "26 ", "27 ", "28 ", "29 ", "30 "]
`
	// toolsScript reads a file, lists files and runs a command (which asks
	// permission), then answers.
	toolsScript = `
[[turn]]
[[turn.tool_calls]]
name = "read_file"
arguments = { path = "notes.txt" }
[[turn.tool_calls]]
name = "list_files"
arguments = {}
[[turn.tool_calls]]
name = "shell"
arguments = { command = "echo hi" }
[[turn]]
text = "Read."
`
)

// toolsAgent is a blueprint whose stage may read, list and run commands.
func toolsAgent(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "tools.toml")
	writeTestFile(t, p, "[agent]\nname = \"tools\"\n[stages.answer]\nmode = \"output\"\navailable_tools = [\"read_file\", \"list_files\", \"shell\"]\n")
	return p
}

const onePixelPNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="

func writeTestFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A tckAgent is one coda process and the kit's mock client of it.
type tckAgent struct {
	t      *testing.T
	cmd    *exec.Cmd
	in     io.WriteCloser
	cwd    string
	lines  chan []byte
	stderr *lockedBuffer

	mu         sync.Mutex
	transcript []tckEntry // what coda sent, in order
	out        bytes.Buffer
	sent       map[string]string // request id (as JSON) → method
	nextID     int

	clientRequests []tckEntry
	exited         chan int
	lastResponse   map[string]any
}

type tckEntry struct {
	raw []byte
	msg map[string]any
}

func (e tckEntry) method() string         { s, _ := e.msg["method"].(string); return s }
func (e tckEntry) params() map[string]any { p, _ := e.msg["params"].(map[string]any); return p }
func (e tckEntry) update() map[string]any { u, _ := e.params()["update"].(map[string]any); return u }
func (a *tckAgent) last() map[string]any  { return a.lastResponse }
func (a *tckAgent) answering(e tckEntry) string {
	if e.msg["method"] != nil {
		return ""
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.sent[string(jsonOf(e.msg["id"]))]
}

// startAgent starts coda serving over stdio with script as its model, in
// a clean environment: a fresh HOME, no keys, a state directory of its
// own, so that it offers sessions that last.
func startAgent(t *testing.T, bin, script string, args ...string) *tckAgent {
	t.Helper()
	dir := t.TempDir()
	cwd := filepath.Join(dir, "cwd")
	if err := os.Mkdir(cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, filepath.Join(cwd, "notes.txt"), "Some notes.\n")
	writeTestFile(t, filepath.Join(dir, "model.toml"), script)
	cmd := exec.Command(bin, append([]string{"--model", "script:" + filepath.Join(dir, "model.toml"), "--state-dir", filepath.Join(dir, "state")}, args...)...)
	cmd.Dir = cwd
	cmd.Env = []string{"HOME=" + dir, "XDG_CONFIG_HOME=" + filepath.Join(dir, "config"), "XDG_STATE_HOME=" + filepath.Join(dir, "xdg-state"),
		"OLLAMA_HOST=127.0.0.1:1", "PATH=" + os.Getenv("PATH")}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	a := &tckAgent{t: t, cmd: cmd, in: in, cwd: cwd, lines: make(chan []byte, 64), stderr: &lockedBuffer{}, sent: map[string]string{}, exited: make(chan int, 1)}
	cmd.Stderr = a.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		r := bufio.NewReader(out)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				a.mu.Lock()
				a.out.Write(line)
				a.mu.Unlock()
				a.lines <- bytes.TrimRight(line, "\n")
			}
			if err != nil {
				close(a.lines)
				code := 0
				if err := cmd.Wait(); err != nil {
					code = -1
					if ee, ok := err.(*exec.ExitError); ok {
						code = ee.ExitCode()
					}
				}
				a.exited <- code
				return
			}
		}
	}()
	t.Cleanup(func() {
		a.close()
		if t.Failed() {
			t.Logf("coda's stderr:\n%s", a.stderr.String())
		}
	})
	return a
}

// close closes coda's stdin and returns its exit status, waiting at most
// a minute (a hang detector).
func (a *tckAgent) close() int {
	a.in.Close()
	for {
		select {
		case _, ok := <-a.lines:
			if ok {
				continue
			}
			select {
			case code := <-a.exited:
				a.exited <- code
				return code
			case <-time.After(time.Minute):
			}
		case <-time.After(time.Minute):
		}
		a.cmd.Process.Kill()
		a.t.Errorf("coda did not exit within a minute of stdin closing")
		return -1
	}
}

func (a *tckAgent) sendRaw(b []byte) {
	if _, err := a.in.Write(append(b, '\n')); err != nil {
		a.t.Fatalf("writing to coda: %v", err)
	}
}

// request sends a request (id nil: the next number) and returns its id.
func (a *tckAgent) request(method string, params any, id any) any {
	if id == nil {
		a.mu.Lock()
		a.nextID++
		id = a.nextID
		a.mu.Unlock()
	}
	msg := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	a.mu.Lock()
	a.sent[string(jsonOf(id))] = method
	a.mu.Unlock()
	a.sendRaw(jsonOf(msg))
	return id
}

func (a *tckAgent) notify(method string, params any) {
	a.sendRaw(jsonOf(map[string]any{"jsonrpc": "2.0", "method": method, "params": params}))
}

// next is the next line coda sends; what coda asks of the client is
// answered as the kit's mock client answers it.
func (a *tckAgent) next() tckEntry {
	a.t.Helper()
	select {
	case line, ok := <-a.lines:
		if !ok {
			a.t.Fatalf("coda closed its stdout; its stderr:\n%s", a.stderr.String())
		}
		e := tckEntry{raw: line}
		json.Unmarshal(line, &e.msg)
		a.mu.Lock()
		a.transcript = append(a.transcript, e)
		a.mu.Unlock()
		if e.msg["method"] != nil && e.msg["id"] != nil {
			a.clientRequests = append(a.clientRequests, e)
			a.answer(e)
		}
		return e
	case <-time.After(time.Minute):
		a.t.Fatalf("coda sent nothing for a minute")
		return tckEntry{}
	}
}

// answer answers coda's request e: a permission with its first option,
// anything else -32601 (the client advertised no capability).
func (a *tckAgent) answer(e tckEntry) {
	id := jsonOf(e.msg["id"])
	if e.method() == "session/request_permission" {
		opts, _ := e.params()["options"].([]any)
		if len(opts) > 0 {
			opt := opts[0].(map[string]any)["optionId"]
			a.sendRaw([]byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"outcome":{"outcome":"selected","optionId":%s}}}`, id, jsonOf(opt))))
			return
		}
	}
	a.sendRaw([]byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`, id)))
}

// until reads up to the response to id and returns what came before it.
func (a *tckAgent) until(id any) []tckEntry {
	a.t.Helper()
	want := string(jsonOf(id))
	var before []tckEntry
	for {
		e := a.next()
		if e.msg["method"] == nil && string(jsonOf(e.msg["id"])) == want {
			a.lastResponse = e.msg
			return before
		}
		before = append(before, e)
	}
}

// response is the response to id.
func (a *tckAgent) response(id any) map[string]any {
	a.t.Helper()
	a.until(id)
	return a.lastResponse
}

// handshake initializes the connection and returns initialize's result.
func (a *tckAgent) handshake(caps map[string]any) map[string]any {
	a.t.Helper()
	r := a.response(a.request("initialize", initParams(caps), nil))
	res, ok := r["result"].(map[string]any)
	if !ok {
		a.t.Fatalf("initialize: %v", r)
	}
	return res
}

// newSession opens a session in the connection's cwd.
func (a *tckAgent) newSession() string {
	a.t.Helper()
	r := a.response(a.request("session/new", newParams(a.cwd), nil))
	sid, _ := resultOf(r)["sessionId"].(string)
	if sid == "" {
		a.t.Fatalf("session/new: %v", r)
	}
	return sid
}

type tckTurn struct {
	updates  []tckEntry
	response map[string]any
}

func (a *tckAgent) prompt(sid string, blocks ...any) tckTurn {
	return a.promptWith(sid, blocks, nil, nil)
}

// promptWith sends a prompt and reads its turn; action, when set, runs
// once the first session/update of the turn has come (the kit's trigger).
func (a *tckAgent) promptWith(sid string, blocks []any, extra map[string]any, action func()) tckTurn {
	a.t.Helper()
	p := map[string]any{"sessionId": sid, "prompt": blocks}
	for k, v := range extra {
		p[k] = v
	}
	want := string(jsonOf(a.request("session/prompt", p, nil)))
	var turn tckTurn
	for {
		e := a.next()
		if e.msg["method"] == nil && string(jsonOf(e.msg["id"])) == want {
			turn.response = e.msg
			return turn
		}
		if e.method() == "session/update" && e.params()["sessionId"] == sid {
			turn.updates = append(turn.updates, e)
			if action != nil && strings.HasSuffix(fmt.Sprint(e.update()["sessionUpdate"]), "_chunk") {
				action()
				action = nil
			}
		}
	}
}

// nothingAfter checks that no session/update of sid comes after the
// response just read: a later request's answer comes after all of it.
func (a *tckAgent) nothingAfter(t *testing.T, sid string) {
	t.Helper()
	for _, e := range a.until(a.request("session/list", map[string]any{}, nil)) {
		if e.method() == "session/update" && e.params()["sessionId"] == sid {
			t.Errorf("a session/update after the response: %s", e.raw)
		}
	}
}

// received is every line coda has sent so far.
func (a *tckAgent) received() []tckEntry {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]tckEntry(nil), a.transcript...)
}

func (a *tckAgent) stdout() []byte {
	a.mu.Lock()
	defer a.mu.Unlock()
	return bytes.Clone(a.out.Bytes())
}

func initParams(caps map[string]any) map[string]any {
	if caps == nil {
		caps = map[string]any{}
	}
	return map[string]any{"protocolVersion": 1, "clientCapabilities": caps}
}

func newParams(cwd string) map[string]any {
	return map[string]any{"cwd": cwd, "mcpServers": []any{}}
}

func loadParams(sid, cwd string, servers bool) map[string]any {
	p := map[string]any{"sessionId": sid, "cwd": cwd}
	if servers {
		p["mcpServers"] = []any{}
	}
	return p
}

func textBlock(text string) map[string]any { return map[string]any{"type": "text", "text": text} }

func resultOf(r map[string]any) map[string]any { m, _ := r["result"].(map[string]any); return m }

func errCode(r map[string]any) int {
	e, _ := r["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return int(c)
}

// envelope says what is wrong with a response's envelope, "" when nothing.
func envelope(r map[string]any) string {
	_, hasResult := r["result"]
	e, hasError := r["error"]
	switch {
	case r["jsonrpc"] != "2.0":
		return "no jsonrpc 2.0"
	case hasResult == hasError:
		return "not exactly one of result and error"
	case hasError:
		em, ok := e.(map[string]any)
		if !ok {
			return "an error that is no object"
		}
		if c, ok := em["code"].(float64); !ok || c != float64(int(c)) {
			return "an error code that is no integer"
		}
		if _, ok := em["message"].(string); !ok {
			return "an error message that is no string"
		}
	}
	return ""
}

var stopReasons = []any{"end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"}

func wantStop(t *testing.T, r map[string]any) {
	t.Helper()
	if !slices.Contains(stopReasons, resultOf(r)["stopReason"]) {
		t.Errorf("the prompt is answered %v, want a result with a defined stopReason", r)
	}
}

func modeIDs(modes map[string]any) []any {
	var ids []any
	for _, m := range asSlice(modes["availableModes"]) {
		ids = append(ids, m.(map[string]any)["id"])
	}
	return ids
}

func selectValues(o map[string]any) []any {
	var vs []any
	for _, x := range asSlice(o["options"]) {
		x := x.(map[string]any)
		if group := asSlice(x["options"]); group != nil {
			for _, g := range group {
				vs = append(vs, g.(map[string]any)["value"])
			}
			continue
		}
		vs = append(vs, x["value"])
	}
	return vs
}

func asSlice(v any) []any { s, _ := v.([]any); return s }

func jsonOf(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
